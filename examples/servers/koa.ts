// The Provisioning API as a Koa 3 middleware, in front of the application's own.
// Run: npm run example:koa (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer } from "node:http";
import Koa from "koa";
import { toKoaMiddleware } from "platform-integration/koa";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { createScimHandler } from "platform-integration/scim";
import { withReadUserRoute } from "platform-integration/testing";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions, scimStore } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's page at /. */
export function start({ store, readUserRoute, scimToken, ...address }: StartOptions) {
  const app = new Koa();
  // Koa has no mount of its own: the handler is told where it lives, and passes other paths on.
  let provisioning = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  app.use(toKoaMiddleware(provisioning));
  // SCIM 2.0 from the same store, for identity providers, at its default basePath /scim/v2.
  if (scimToken !== undefined) {
    app.use(toKoaMiddleware(createScimHandler({ store: scimStore(store), token: scimToken })));
  }
  app.use((ctx) => {
    if (ctx.path === "/" && (ctx.method === "GET" || ctx.method === "HEAD")) {
      ctx.body = "Hello from Koa. The Provisioning API is at /ldap/auth.\n";
    }
  });
  return listen(createServer(app.callback()), address, "/ldap/auth");
}

if (import.meta.main) await runFromCommandLine(start);
