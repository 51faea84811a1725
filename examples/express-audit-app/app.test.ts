import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { type AuditDrop, createAuditClient } from "platform-integration/audit";
import {
  createFakeIntegrationApi,
  type FakeIntegrationApiOptions,
} from "platform-integration/testing";
import { createVersionClient } from "platform-integration/version";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AppOptions, createApp, type User } from "./app.ts";
import { type AuditAction, auditActions } from "./audit-actions.ts";

const bob: User = { id: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a", username: "bob" };
const password = "password123";
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A Fetch handler (the fake Integration API's `handle`) on a real port of 127.0.0.1, through
 * @hono/node-server, as `npx platform-integration mock-api` serves it.
 */
async function serveFetch(handle: (request: Request) => Promise<Response>) {
  const server = createAdaptorServer({ fetch: (request: Request) => handle(request) }) as Server;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The fake Integration API on a real port, and the app on another, its clients pointed at the
 * fake as PLATFORM_INTEGRATIONAPI would point them at the platform.
 */
async function start({
  fake,
  app: appOptions,
  integrationApiDown = false,
}: {
  fake?: FakeIntegrationApiOptions;
  app?: Partial<AppOptions>;
  integrationApiDown?: boolean;
} = {}) {
  const api = createFakeIntegrationApi(fake);
  const served = await serveFetch(api.respond);
  if (integrationApiDown) await served.close();
  else cleanups.push(() => served.close());

  const drops: AuditDrop<AuditAction>[] = [];
  const auditErrors: unknown[] = [];
  const versionErrors: unknown[] = [];
  const audit = createAuditClient({
    baseUrl: served.baseUrl,
    actions: auditActions,
    retry: { baseDelayMs: 10 },
    onDrop: (drop) => drops.push(drop),
    onError: (error) => auditErrors.push(error),
  });
  cleanups.push(() => audit.close({ timeoutMs: 1_000 }));
  const stop = new AbortController();
  cleanups.push(async () => stop.abort());

  const app = createApp({
    audit,
    version: createVersionClient({
      api: "integration",
      baseUrl: served.baseUrl,
      retry: { limit: 0 },
    }),
    authenticate: async (username, given) =>
      username === bob.username && given === password ? bob : undefined,
    signal: stop.signal,
    onVersionError: (error) => versionErrors.push(error),
    ...appOptions,
  });
  const server = createServer(app).listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { api, audit, drops, auditErrors, versionErrors, url: `http://127.0.0.1:${port}` };
}

function signIn(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function page(url: string): Promise<string> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return response.text();
}

describe("behind a reverse proxy it trusts", () => {
  // The test client connects from 127.0.0.1, so here it plays the proxy.
  const behindProxy = { trustProxy: "loopback" };

  it("audits sign-ins and failed ones under the address the proxy reported", async () => {
    const { api, audit, url } = await start({ app: behindProxy });

    const success = await signIn(
      url,
      { username: "bob", password },
      { "x-forwarded-for": "203.0.113.7" },
    );
    expect(success.status).toBe(200);
    // The client wrote 6.6.6.6 itself; the proxy appended the address it saw.
    const failure = await signIn(
      url,
      { username: "bob", password: "guess" },
      { "x-forwarded-for": "6.6.6.6, 198.51.100.23" },
    );
    expect(failure.status).toBe(401);

    expect(await audit.flush()).toBe(true);
    expect(api.auditEvents).toEqual([
      {
        action: "user.signin.success",
        name: "user.signin",
        title: "User Sign-in Success",
        description: `${bob.id} (bob) signed in`,
        ipAddress: "203.0.113.7",
      },
      {
        action: "user.signin.failure",
        name: "user.signin",
        title: "User Sign-in Failure",
        description: 'Sign-in failed for "bob"',
        ipAddress: "198.51.100.23",
      },
    ]);
    expect(JSON.stringify(api.auditEvents)).not.toContain("guess");
  });

  it("audits a report export by the signed-in user", async () => {
    const { api, audit, url } = await start({ app: behindProxy });
    const { token } = (await (
      await signIn(url, { username: "bob", password }, { "x-forwarded-for": "203.0.113.7" })
    ).json()) as { token: string };

    const anonymous = await fetch(`${url}/reports/q3-sales/export`);
    expect(anonymous.status).toBe(401);
    const exported = await fetch(`${url}/reports/q3-sales/export`, {
      headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "203.0.113.8" },
    });
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(await exported.text()).toContain("region,total");

    await audit.flush();
    expect(api.auditEvents.map(({ action, ipAddress }) => [action, ipAddress])).toEqual([
      ["user.signin.success", "203.0.113.7"],
      ["report.export", "203.0.113.8"],
    ]);
    expect(api.auditEvents[1]).toMatchObject({
      name: "report.export",
      description: `${bob.id} (bob) exported the report q3-sales`,
    });
  });

  it("delivers the events of an Integration API outage once it answers again", async () => {
    const { api, audit, auditErrors, url } = await start({ app: behindProxy });
    // The banner's first poll may take one of these failures; the audit client gets the others.
    api.failNext(3, { status: 503 });
    expect((await signIn(url, { username: "bob", password })).status).toBe(200);
    expect(await audit.flush()).toBe(true);
    expect(auditErrors.length).toBeGreaterThanOrEqual(2);
    expect(api.auditEvents).toMatchObject([{ action: "user.signin.success" }]);
  });
});

describe("with a peer it does not trust", () => {
  it("ignores a spoofed X-Forwarded-For and audits the connection's address", async () => {
    // The real proxies are in 10.0.0.0/8; the test client at 127.0.0.1 is not one of them.
    const { api, audit, url } = await start({ app: { trustProxy: "10.0.0.0/8" } });
    await signIn(url, { username: "bob", password: "guess" }, { "x-forwarded-for": "203.0.113.7" });
    await audit.flush();
    expect(api.auditEvents).toMatchObject([
      { action: "user.signin.failure", ipAddress: "127.0.0.1" },
    ]);
  });

  it("trusts no proxy by default", async () => {
    const { api, audit, url } = await start();
    await signIn(url, { username: "bob", password }, { "x-forwarded-for": "203.0.113.7" });
    await audit.flush();
    expect(api.auditEvents).toMatchObject([{ ipAddress: "127.0.0.1" }]);
  });
});

describe("the pending-update banner", () => {
  it("appears while an update is pending, escaped, and goes once it is installed", async () => {
    const { api, url } = await start({
      fake: {
        current: { version: "1.0.0", releaseSequence: 1 },
        updates: [{ version: "2.0.0", releaseSequence: 2, releaseNotes: "Faster <b>sync</b>" }],
      },
      app: { updatesIntervalMs: 20 },
    });
    await vi.waitFor(async () =>
      expect(await page(url)).toContain(
        "Version 2.0.0 is available: Faster &#60;b&#62;sync&#60;/b&#62;. Ask your administrator",
      ),
    );
    api.apply(2); // as the platform console would
    await vi.waitFor(async () => expect(await page(url)).not.toContain("update-banner"));
  });

  it("names the newest of several pending updates", async () => {
    const { url } = await start({
      fake: {
        updates: [
          { version: "1.1.0", releaseSequence: 2 },
          { version: "1.2.0", releaseSequence: 3 },
        ],
      },
    });
    await vi.waitFor(async () =>
      expect(await page(url)).toContain("Version 1.2.0 is available (2 updates pending)."),
    );
  });
});

describe("while the Integration API is down", () => {
  it("serves pages without a banner, signs users in, and reports the events it could not send", async () => {
    const { audit, drops, versionErrors, url } = await start({
      fake: { updates: [{ version: "2.0.0", releaseSequence: 2 }] },
      integrationApiDown: true,
    });
    await vi.waitFor(() => expect(versionErrors).toMatchObject([{ name: "NetworkError" }]));
    expect(await page(url)).not.toContain("update-banner");

    expect((await signIn(url, { username: "bob", password })).status).toBe(200);
    expect(await audit.close({ timeoutMs: 100 })).toBe(false);
    expect(drops).toMatchObject([
      { reason: "closed", count: 1, events: [{ action: "user.signin.success" }] },
    ]);
  });
});

describe("bad input", () => {
  it("answers 400 with a JSON error that does not repeat the body", async () => {
    const { api, audit, url } = await start();
    const malformed = await signIn(url, '{"username":"bob","password":"s3cret-pass"');
    expect(malformed.status).toBe(400);
    const body = await malformed.text();
    expect(JSON.parse(body)).toEqual({
      error: "invalid_json",
      message: "The body is not valid JSON.",
    });
    expect(body).not.toContain("s3cret");

    const missing = await signIn(url, { username: "bob" });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);

    await audit.flush();
    expect(api.auditEvents).toEqual([]);
  });
});
