// platform-integration/sqlite: SqliteUserStore.
export { SqliteUserStore, type SqliteUserStoreOptions } from "./sqlite-user-store.ts";
