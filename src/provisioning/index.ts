// platform-integration/provisioning: the Provisioning API handler and, from src/users, the user
// record, UserStore, MemoryUserStore, the store rules and the quarantine's public types.
export type { LogFields, Logger } from "../internal/logger.ts";
export { MemoryUserStore, type MemoryUserStoreOptions } from "../users/memory-user-store.ts";
export type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "../users/quarantine-store.ts";
export type {
  QuarantinedUser,
  QuarantineEvent,
  QuarantineRetry,
  QuarantineStats,
} from "../users/quarantine-types.ts";
export {
  type OnDelete,
  type StoreRulesOptions,
  type UniqueField,
  uniqueFieldNames,
} from "../users/store-rules.ts";
export { UserConflictError } from "../users/user-conflict-error.ts";
export {
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  userFieldNames,
} from "../users/user-record.ts";
export { userRecordSchema } from "../users/user-record-schema.ts";
export type {
  ReplaceOptions,
  UserExtraMatch,
  UserLookup,
  UserPage,
  UserPageOptions,
  UserReadOptions,
  UserStore,
  UserStoreReads,
} from "../users/user-store.ts";
export { type Authorize, allowAddresses, sharedSecret } from "./authorize.ts";
export {
  ProvisioningError,
  type ProvisioningErrorBody,
  type ProvisioningErrorCode,
  type ProvisioningErrorStatus,
} from "./errors.ts";
export { createProvisioningHandler } from "./handler.ts";
export type {
  EdgeAnswers,
  ProvisioningHandler,
  ProvisioningHandlerOptions,
  ServedHandler,
} from "./handler-options.ts";
export type { ProvisioningTelemetryOptions } from "./observe.ts";
export type { CountedOperation, ProvisioningStats } from "./stats.ts";
export type {
  GuardedRequest,
  HeaderRecord,
  ProvisioningChange,
  ProvisioningErrorContext,
  ProvisioningOperation,
  ProvisioningRequest,
  ProvisioningResponse,
  RequestHeaders,
} from "./types.ts";
