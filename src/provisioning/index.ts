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
export { MemoryUserStore } from "./memory-user-store.ts";
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
export {
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  userFieldNames,
} from "./user-record.ts";
export { userRecordSchema } from "./user-record-schema.ts";
export type { UpsertResult, UserStore } from "./user-store.ts";
