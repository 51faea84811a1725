// The app's own server on loopback while msw intercepts the Integration API: the platform
// simulator drives the app's Provisioning API over real HTTP, and the app's audit events still
// reach the fake. msw intercepts every request of the process, so the test lets the loopback ones
// through (`passthrough`); with `onUnhandledFrame: "error"`, anything else still fails the test.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { http, passthrough } from "msw";
import { setupServer } from "msw/node";
import { createIntegrationApiHandlers } from "platform-integration/msw";
import { toNodeHandler } from "platform-integration/node";
import { createPlatformSimulator } from "platform-integration/testing";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { audit, provisioning, store } from "./app.ts";

// The platform sets PLATFORM_INTEGRATIONAPI before the app starts, and the app's clients choose
// their API when they are created, as app.ts is imported: so it is set before that import.
vi.hoisted(() => vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test"));

const { handlers, api } = createIntegrationApiHandlers({ baseUrl: "https://platform.test" });
const mocks = setupServer(
  ...handlers,
  // Requests to this machine are the test's own: to the app it serves, past msw.
  http.all(/^https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?\//, () => passthrough()),
);
const app = createServer(toNodeHandler(provisioning));
let url = "";

beforeAll(async () => {
  vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test");
  mocks.listen({ onUnhandledFrame: "error" });
  app.listen(0, "127.0.0.1");
  await once(app, "listening");
  url = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});
afterAll(async () => {
  app.close();
  mocks.close();
  vi.unstubAllEnvs();
});

it("serves the Provisioning API over HTTP to the platform simulator while msw is active", async () => {
  const platform = createPlatformSimulator({ target: url });
  platform.addUser({ uuid: "u-1", username: "ann", email: "ann@example.test" });
  const report = await platform.sync();
  expect(report.completed).toBe(true);
  expect(await store.get("u-1")).toMatchObject({ username: "ann" });
  // The app's hook audited the new user through the (mocked) Integration API.
  await audit.flush();
  expect(api.auditEvents).toContainEqual(expect.objectContaining({ action: "user.provisioned" }));
  // And the test's own fetch of the app's routes passes too.
  expect((await fetch(`${url}/v1/ping`)).status).toBe(204);
});
