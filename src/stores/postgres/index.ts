// platform-integration/postgres: PostgresUserStore.
export { PostgresUserStore, type PostgresUserStoreOptions } from "./postgres-user-store.ts";
