export { SqliteUserStore, type SqliteUserStoreOptions } from "./sqlite-user-store.ts";
