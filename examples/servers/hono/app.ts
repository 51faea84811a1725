// One Hono application for every runtime: node.ts, bun.ts and deno.ts serve it unchanged.
import { Hono } from "hono";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { withReadUserRoute } from "platform-integration/testing";
import type { StartOptions } from "../serve.ts";

/** The application: its page at /, the Provisioning API under /ldap/auth. */
export function createApp({
  store,
  readUserRoute,
}: Pick<StartOptions, "store" | "readUserRoute">): Hono {
  let provisioning = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  return (
    new Hono()
      .get("/", (c) => c.text("Hello from Hono. The Provisioning API is at /ldap/auth.\n"))
      // The request goes on as it came, not copied (as hono/mount's mount() would copy it to strip
      // the prefix). c.env is the runtime's context, from which allowAddresses() learns the peer
      // address on Bun and Deno.
      .all("/ldap/auth/*", (c) => provisioning.fetch(c.req.raw, c.env))
  );
}
