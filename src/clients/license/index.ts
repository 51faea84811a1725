export * from "../integration-api/public.ts";
export { Timestamp } from "../integration-api/timestamp.ts";
export type { ApiOption, Capabilities } from "../sdk-api/api-selection.ts";
export {
  createLicenseClient,
  type LicenseClient,
  type LicenseClientOf,
  type LicenseClientOptions,
  type LicenseFieldValueOf,
  type LicenseOf,
} from "./license-client.ts";
export type {
  KotsLicense,
  License,
  LicenseField,
  LicenseFieldValue,
  LicenseSignature,
  LicenseValue,
  SdkLicense,
  SdkLicenseFieldValue,
} from "./read-license.ts";
export type { SdkLicenseFlags } from "./sdk-license-schemas.ts";
export {
  type LicenseFieldVerdict,
  type SignedLicenseField,
  verifyLicenseField,
} from "./verify-license-field.ts";
