export * from "../integration-api/public.ts";
export { Timestamp } from "../version/timestamp.ts";
export {
  createLicenseClient,
  type LicenseClient,
  type LicenseClientOptions,
} from "./license-client.ts";
export type {
  License,
  LicenseField,
  LicenseFieldValue,
  LicenseValue,
} from "./license-records.ts";
