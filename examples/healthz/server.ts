// An application with the Provisioning API at /ldap/auth, audit events, and a /healthz route
// (health.ts) for the container's health check. Run it beside `npx platform-integration mock-api`:
//   PLATFORM_INTEGRATIONAPI=http://127.0.0.1:9880 node examples/healthz/server.ts
import { createServer } from "node:http";
import { createAuditClient } from "platform-integration/audit";
import { toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { healthz } from "./health.ts";

const maxQueueEvents = 10_000;
const audit = createAuditClient({ maxQueueEvents, logger: console, flushOnExit: true });
const provisioning = createProvisioningHandler({
  store: new MemoryUserStore(),
  basePath: "/ldap/auth",
  logger: console,
  onChange: ({ type, uuid }) =>
    audit.record({ action: `directory.user.${type}`, description: uuid }),
});
const serveProvisioning = toNodeHandler(provisioning);

const server = createServer((request, response) => {
  if (request.url === "/healthz") {
    const { status, body } = healthz(provisioning, audit, { maxQueueEvents });
    response.writeHead(status, { "content-type": "application/json" }).end(body);
    return;
  }
  serveProvisioning(request, response);
});
server.listen(Number(process.env.PORT || 3000), () => {
  console.log(
    `Provisioning API at /ldap/auth, health at /healthz, port ${process.env.PORT || 3000}`,
  );
});
