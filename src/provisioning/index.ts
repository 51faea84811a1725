export { type Authorize, allowAddresses, sharedSecret } from "./authorize.ts";
export {
  ProvisioningError,
  type ProvisioningErrorBody,
  type ProvisioningErrorCode,
  type ProvisioningResponse,
} from "./errors.ts";
export {
  createProvisioningHandler,
  type GuardedRequest,
  type ProvisioningChange,
  type ProvisioningErrorContext,
  type ProvisioningHandler,
  type ProvisioningHandlerOptions,
  type ProvisioningOperation,
  type ProvisioningRequest,
} from "./handler.ts";
export type { HeaderRecord } from "./headers.ts";
export { MemoryUserStore } from "./memory-user-store.ts";
export { userRecordSchema } from "./user-record.ts";
export {
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  type UserStore,
  userFieldNames,
} from "./user-store.ts";
