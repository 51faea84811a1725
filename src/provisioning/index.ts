export type { LogFields, Logger } from "../internal/logger.ts";
export { type Authorize, allowAddresses, sharedSecret } from "./authorize.ts";
export {
  ProvisioningError,
  type ProvisioningErrorBody,
  type ProvisioningErrorCode,
  type ProvisioningErrorStatus,
} from "./errors.ts";
export { createProvisioningHandler } from "./handler.ts";
export type { ProvisioningHandler, ProvisioningHandlerOptions } from "./handler-options.ts";
export { MemoryUserStore, type MemoryUserStoreOptions } from "./memory-user-store.ts";
export type { ProvisioningTelemetryOptions } from "./observe.ts";
export type {
  QuarantinedUser,
  QuarantineEvent,
  QuarantineRetry,
  QuarantineStats,
} from "./quarantine.ts";
export type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "./quarantine-store.ts";
export type { CountedOperation, ProvisioningStats } from "./stats.ts";
export {
  type OnDelete,
  type StoreRulesOptions,
  type UniqueField,
  uniqueFieldNames,
} from "./store-rules.ts";
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
export { UserConflictError } from "./user-conflict-error.ts";
export {
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  userFieldNames,
} from "./user-record.ts";
export { userRecordSchema } from "./user-record-schema.ts";
export type { UserReadOptions, UserStore, UserStoreReads } from "./user-store.ts";
