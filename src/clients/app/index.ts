export * from "../integration-api/public.ts";
export { Timestamp } from "../integration-api/timestamp.ts";
export type { ApiOption, Capabilities } from "../sdk-api/api-selection.ts";
export type { ReadFlags, WriteResult } from "../sdk-api/sdk-answers.ts";
export {
  type AppClient,
  type AppClientOptions,
  createAppClient,
  type InstanceTagOptions,
} from "./app-client.ts";
export type {
  AppHistory,
  AppInfo,
  AppRelease,
  AppStatus,
  CustomMetrics,
  IntegrationMockData,
  IntegrationMockDataInit,
  IntegrationStatus,
  MockAppStatus,
  MockRelease,
  MockReleaseInit,
  ResourceState,
  SupportBundleUpload,
} from "./read-app.ts";
