export { MemoryUserStore } from "./memory-user-store.ts";
export {
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  type UserStore,
  userFieldNames,
} from "./user-store.ts";
