// The Provisioning API as a Fastify 5 plugin registered under a prefix.
// Run: npm run example:fastify (PORT, HOST and DATABASE_FILE as in main.ts).
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { toFastifyPlugin } from "platform-integration/fastify";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { createScimHandler } from "platform-integration/scim";
import { withReadUserRoute } from "platform-integration/testing";
import { runFromCommandLine } from "./main.ts";
import { type RunningServer, type StartOptions, scimStore, serverUrl } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's page at /. */
export async function start(options: StartOptions): Promise<RunningServer> {
  const { store, port, host } = options;
  const app = Fastify();
  let provisioning = createProvisioningHandler({ store });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (options.readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  // The prefix is stripped for the plugin, so the handler's basePath stays empty. The plugin is
  // encapsulated: the application's JSON parser and routes are untouched.
  await app.register(toFastifyPlugin(provisioning), {
    prefix: "/ldap/auth",
  });
  // SCIM 2.0 from the same store, for identity providers: the same plugin, its own prefix.
  if (options.scimToken !== undefined) {
    const scim = createScimHandler({
      store: scimStore(store),
      token: options.scimToken,
      basePath: "",
    });
    await app.register(toFastifyPlugin(scim), { prefix: "/scim/v2" });
  }
  app.get("/", async () => "Hello from Fastify. The Provisioning API is at /ldap/auth.\n");

  // Fastify listens on localhost only unless told otherwise.
  await app.listen({ port, host: host ?? "0.0.0.0" });
  const { port: actual } = app.server.address() as AddressInfo;
  // close() lets the requests under way finish and ends idle keep-alive connections.
  return { url: serverUrl(host, actual, "/ldap/auth"), close: () => app.close() };
}

if (import.meta.main) await runFromCommandLine(start);
