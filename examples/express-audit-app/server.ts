// Runs the app: PORT (default 3000), PLATFORM_INTEGRATIONAPI (the platform sets it; locally,
// `npx platform-integration mock-api`), TRUST_PROXY (the proxies in front: a hop count, or
// addresses and ranges such as "10.0.0.0/8"; default none), PLATFORM_CA (the platform's
// certificate, PEM). Stops gracefully on SIGTERM and SIGINT.
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAuditClient } from "platform-integration/audit";
import { createVersionClient } from "platform-integration/version";
import { createApp, type User } from "./app.ts";
import { auditActions } from "./audit-actions.ts";

const port = Number(process.env.PORT ?? 3000);
const integrationApi = process.env.PLATFORM_INTEGRATIONAPI;
if (!integrationApi || !Number.isInteger(port)) {
  console.error(
    "Set PLATFORM_INTEGRATIONAPI to the Integration API's URL (locally: npx platform-integration mock-api) and PORT to a port number.",
  );
  process.exit(2);
}
const trustProxy = process.env.TRUST_PROXY;
const ca = process.env.PLATFORM_CA;
const clientOptions = { baseUrl: integrationApi, ...(ca ? { tls: { ca } } : {}) };

const audit = createAuditClient({
  ...clientOptions,
  actions: auditActions,
  // A dropped event is still evidence: keep it in the application's own log.
  onDrop: ({ reason, count, events }) =>
    console.error(`audit: dropped ${count} event(s) (${reason})`, JSON.stringify(events)),
});
const version = createVersionClient({ api: "integration", ...clientOptions });

// A stand-in for your sign-in (the platform's Identity API): one demo user.
const demoUser: User = { id: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a", username: "bob" };
const demoPassword = digest(process.env.DEMO_PASSWORD ?? "password123");
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

const stopping = new AbortController();
const app = createApp({
  audit,
  version,
  authenticate: async (username, password) =>
    username === demoUser.username && timingSafeEqual(digest(password), demoPassword)
      ? demoUser
      : undefined,
  // "2" is two hops; anything else names addresses and ranges.
  trustProxy: trustProxy && /^\d+$/.test(trustProxy) ? Number(trustProxy) : trustProxy,
  signal: stopping.signal,
});

const server = createServer(app);
server.listen(port, () => {
  const { port: actual } = server.address() as AddressInfo;
  console.log(`Listening on http://localhost:${actual}, Integration API at ${integrationApi}`);
});

async function shutdown(signal: string): Promise<void> {
  console.log(`${signal}: finishing requests and delivering audit events`);
  stopping.abort();
  // Requests under way finish; idle keep-alive connections close now, slow ones after 10 s.
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), 10_000).unref();
  await closed;
  // Delivers what is still queued; after 5 s the rest is reported to onDrop.
  const delivered = await audit.close({ timeoutMs: 5_000 });
  console.log(delivered ? "All audit events delivered." : "Some audit events were not delivered.");
  process.exit(0);
}
process.once("SIGTERM", (signal) => void shutdown(signal));
process.once("SIGINT", (signal) => void shutdown(signal));
