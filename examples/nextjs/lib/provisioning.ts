// The handler of the Next.js example, in its own module: a route file may export only route
// handlers and route segment options, and the tests read the store.
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";

/**
 * Where users are kept. Memory lives and dies with one server process, and each serverless
 * instance has its own: in production, use a database store such as
 * `PostgresUserStore` from `platform-integration/postgres` (with `export const runtime =
 * "nodejs"` in the route).
 */
export const store = new MemoryUserStore();

/** The Provisioning API at /ldap/auth: the route's folder, which Next.js does not strip. */
export const handler = createProvisioningHandler({ store, basePath: "/ldap/auth" });
