// The Provisioning API on a bare node:http server, beside the application's own routes.
// Run: npm run example:node (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's page at /. */
export function start({ store, ...address }: StartOptions) {
  // node:http has no router to strip a prefix: the handler is told where it lives.
  const handler = createProvisioningHandler({ store, basePath: "/ldap/auth" });
  const provisioning = toNodeHandler(handler);
  const server = createServer((req, res) => provisioning(req, res, () => application(req, res)));
  return listen(server, address, "/ldap/auth");
}

// Stands for the rest of your application: the requests the Provisioning API passed on.
function application(req: IncomingMessage, res: ServerResponse): void {
  const found = req.url === "/" && (req.method === "GET" || req.method === "HEAD");
  res.writeHead(found ? 200 : 404, { "content-type": "text/plain; charset=utf-8" });
  res.end(found ? "Hello from node:http. The Provisioning API is at /ldap/auth.\n" : "Not found\n");
}

if (import.meta.main) await runFromCommandLine(start);
