// One Hono application for every runtime: node.ts, bun.ts and deno.ts serve it unchanged.
import { Hono } from "hono";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { createScimHandler } from "platform-integration/scim";
import { withReadUserRoute } from "platform-integration/testing";
import { type StartOptions, scimStore } from "../serve.ts";

/**
 * The application: its page at /, the Provisioning API under /ldap/auth, and SCIM 2.0 at /scim/v2
 * from the same store when given a token.
 */
export function createApp({
  store,
  readUserRoute,
  scimToken,
}: Pick<StartOptions, "store" | "readUserRoute" | "scimToken">): Hono {
  let provisioning = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  const scim =
    scimToken === undefined
      ? undefined
      : createScimHandler({ store: scimStore(store), token: scimToken });
  const app = new Hono();
  if (scim) app.all("/scim/v2/*", (c) => scim.fetch(c.req.raw));
  return (
    app
      .get("/", (c) => c.text("Hello from Hono. The Provisioning API is at /ldap/auth.\n"))
      // The request goes on as it came, not copied (as hono/mount's mount() would copy it to strip
      // the prefix). c.env is the runtime's context, from which allowAddresses() learns the peer
      // address on Bun and Deno.
      .all("/ldap/auth/*", (c) => provisioning.fetch(c.req.raw, c.env))
  );
}
