export * from "../integration-api/public.ts";
export { Timestamp } from "../integration-api/timestamp.ts";
export type { ApiOption, Capabilities } from "../sdk-api/api-selection.ts";
export type {
  CurrentVersion,
  InvalidVersionUpdate,
  SdkCurrentVersion,
  SdkVersionUpdate,
  VersionUpdate,
  VersionUpdateList,
} from "./read-version.ts";
export {
  type ApplyResult,
  type ApplyTarget,
  type CurrentVersionOf,
  createVersionClient,
  type VersionClient,
  type VersionClientOf,
  type VersionClientOptions,
  type VersionUpdateOf,
  type WatchUpdatesOptions,
} from "./version-client.ts";
