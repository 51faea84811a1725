// The Provisioning API on a bare node:http server, beside the application's own routes, and
// SCIM 2.0 at /scim/v2 from the same store when SCIM_TOKEN is set.
// Run: npm run example:node (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { createScimHandler } from "platform-integration/scim";
import { withReadUserRoute } from "platform-integration/testing";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions, scimStore } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's page at /. */
export function start({ store, readUserRoute, scimToken, ...address }: StartOptions) {
  // node:http has no router to strip a prefix: the handler is told where it lives.
  let handler = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) handler = withReadUserRoute(handler, store);
  const provisioning = toNodeHandler(handler);
  // SCIM for identity providers, over the same store: a user the platform pushed is the SCIM
  // user of the same id, and the other way round. Its handler lives at /scim/v2 (its default).
  const scim =
    scimToken === undefined
      ? undefined
      : toNodeHandler(createScimHandler({ store: scimStore(store), token: scimToken }));
  const rest = (req: IncomingMessage, res: ServerResponse) =>
    scim ? scim(req, res, () => application(req, res)) : application(req, res);
  const server = createServer((req, res) => provisioning(req, res, () => rest(req, res)));
  return listen(server, address, "/ldap/auth");
}

// Stands for the rest of your application: the requests the Provisioning API passed on.
function application(req: IncomingMessage, res: ServerResponse): void {
  const found = req.url === "/" && (req.method === "GET" || req.method === "HEAD");
  res.writeHead(found ? 200 : 404, { "content-type": "text/plain; charset=utf-8" });
  res.end(found ? "Hello from node:http. The Provisioning API is at /ldap/auth.\n" : "Not found\n");
}

if (import.meta.main) await runFromCommandLine(start);
