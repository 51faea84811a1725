export * from "../integration-api/public.ts";
export { Timestamp } from "./timestamp.ts";
export {
  type ApplyResult,
  createVersionClient,
  type VersionClient,
  type VersionClientOptions,
  type WatchUpdatesOptions,
} from "./version-client.ts";
export type {
  CurrentVersion,
  InvalidVersionUpdate,
  VersionUpdate,
  VersionUpdateList,
} from "./version-records.ts";
