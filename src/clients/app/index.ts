export * from "../integration-api/public.ts";
export { Timestamp } from "../integration-api/timestamp.ts";
export type { ApiOption, Capabilities } from "../sdk-api/api-selection.ts";
export type { ReadFlags, WriteResult } from "../sdk-api/sdk-answers.ts";
export {
  type AppClient,
  type AppClientOptions,
  type AppHistory,
  type AppInfo,
  type AppRelease,
  type AppStatus,
  type CustomMetrics,
  createAppClient,
  type InstanceTagOptions,
  type IntegrationMockData,
  type IntegrationMockDataInit,
  type IntegrationStatus,
  type MockAppStatus,
  type MockRelease,
  type MockReleaseInit,
  type ResourceState,
  type SupportBundleUpload,
} from "./app-client.ts";
