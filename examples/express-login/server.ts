// Runs the login example: PORT (default 3000), PLATFORM_INTEGRATIONAPI (the platform sets it;
// locally, `npx platform-integration mock-api`, then log in as bob / password123), PLATFORM_CA
// (the platform's CA, PEM). While its initial sync runs, the admin console shows its progress.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { createConsoleClient } from "platform-integration/console";
import { createIdentityClient } from "platform-integration/identity";
import { createLoginApp, type Logger } from "./app.ts";
import { LoginThrottle } from "./login-throttle.ts";
import { runWithStartupStatus } from "./startup-status.ts";

const port = Number(process.env.PORT ?? 3000);
if (!process.env.PLATFORM_INTEGRATIONAPI || !Number.isInteger(port)) {
  console.error(
    "Set PLATFORM_INTEGRATIONAPI (locally: npx platform-integration mock-api) and PORT to a port number.",
  );
  process.exit(2);
}
const ca = process.env.PLATFORM_CA;
const clientOptions = ca ? { tls: { ca } } : {};

const logger: Logger = {
  info: (message, fields) => console.log(JSON.stringify({ level: "info", message, ...fields })),
  error: (message, fields) => console.error(JSON.stringify({ level: "error", message, ...fields })),
};
let ready = false;
const app = createLoginApp({
  identity: createIdentityClient(clientOptions),
  throttle: new LoginThrottle(),
  logger,
  ready: () => ready,
});
const server = createServer(app);
server.listen(port, () => {
  const { port: actual } = server.address() as AddressInfo;
  logger.info(`listening on http://localhost:${actual}`);
});

// A stand-in for the application's own initial sync (loading users, warming caches): 5 steps.
await runWithStartupStatus(
  createConsoleClient(clientOptions),
  async (progress) => {
    for (let done = 0; done <= 5; done++) {
      progress(done, 5);
      await sleep(500);
    }
  },
  {
    label: "Initial sync",
    onStatusError: (error) => logger.error("start-up status not shown", { error: String(error) }),
  },
);
ready = true;
logger.info("initial sync done");

process.once("SIGTERM", () => server.close(() => process.exit(0)));
process.once("SIGINT", () => server.close(() => process.exit(0)));
