export {
  type MessageKind,
  type MessageSummary,
  type SyncStop,
  TargetError,
} from "../platform/messages.ts";
export type {
  FetchHandler,
  ProvisioningAnswer,
  ProvisioningApiClient,
  ProvisioningCall,
  ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
// The same verifier and report as the platform simulator's (platform-integration/testing).
export type { UserDifference, VerifyReport } from "../platform/verify-users.ts";
export { StateFileError, StateMismatchError } from "../sync/acknowledged-state.ts";
export type {
  DeleteGuard,
  DeleteGuardStop,
  DirectoryRead,
  DirectorySync,
  DirectorySyncProgress,
  DirectorySyncReport,
  SyncMode,
  SyncTargetOptions,
} from "../sync/directory-sync-types.ts";
export {
  type ChangeFeed,
  type DirectoryChanges,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
  type SkippedEntry,
} from "../sync/source.ts";
export type { DisabledAccounts } from "./active-directory.ts";
export {
  createDirectorySync,
  type LdapSyncOptions,
  type SourceSyncOptions,
} from "./create-directory-sync.ts";
export type { LdapConnectionOptions } from "./ldap-connection.ts";
export {
  binaryAttributes,
  type DirectoryMapping,
  defaultMapping,
  directoryUuid,
  type FieldSource,
  fromAttributes,
  type LdapEntry,
} from "./mapping.ts";
export { objectGuidToString, objectSidToString } from "./object-guid.ts";
