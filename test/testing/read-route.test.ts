import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { runConformance, withReadUserRoute } from "../../src/testing/index.ts";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function setUp(basePath = "") {
  const store = new MemoryUserStore();
  const handler = withReadUserRoute(createProvisioningHandler({ store, basePath }), store);
  return { store, handler };
}

const get = (path: string, method = "GET") => new Request(`http://app.test${path}`, { method });

describe("withReadUserRoute", () => {
  it("answers GET /v1/user/:uuid with the stored user in snake_case, never the password", async () => {
    const { store, handler } = setUp("/ldap/auth");
    await store.upsert({
      uuid: "a/b c",
      firstName: "Zoë",
      password: "secret",
      passwordFormat: "plain",
      extra: { department: "R&D" },
    });
    const response = await handler.fetch(get("/ldap/auth/v1/user/a%2Fb%20c"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      uuid: "a/b c",
      first_name: "Zoë",
      password_format: "plain",
      department: "R&D",
    });
    expect(text).not.toContain("secret");
    const head = await handler.fetch(get("/ldap/auth/v1/user/a%2Fb%20c", "HEAD"));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("answers 404 for a missing user, 400 for broken percent-encoding, in the API's JSON", async () => {
    const { handler } = setUp();
    const missing = await handler.fetch(get("/v1/user/nobody"));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
    expect((await handler.fetch(get("/v1/user/%E0%A4%A"))).status).toBe(400);
  });

  it("passes every other request to the handler, through fetch and the plain-data handle", async () => {
    const { store, handler } = setUp();
    const created = await handler.fetch(
      new Request("http://app.test/v1/user/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uuid: "u1", username: "bob" }),
      }),
    );
    expect(created.status).toBe(201);
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "bob" });
    // The route's own methods still belong to the API: GET on create is not a read.
    expect((await handler.fetch(get("/v1/user/create"))).status).toBe(405);
    expect((await handler.fetch(get("/v1/ping"))).status).toBe(204);
    const read = await handler.handle({ method: "GET", path: "/v1/user/u1", headers: {} });
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body ?? "")).toEqual({ uuid: "u1", username: "bob" });
    const deleted = await handler.handle({ method: "DELETE", path: "/v1/user/u1", headers: {} });
    expect(deleted.status).toBe(204);
    expect(handler.owns("/v1/user/u1")).toBe(true);
    expect(handler.basePath).toBe("");
  });

  it("answers 503 when the store's get fails", async () => {
    const store = new MemoryUserStore();
    const handler = withReadUserRoute(createProvisioningHandler({ store }), {
      get: () => Promise.reject(new Error("down")),
    });
    expect((await handler.fetch(get("/v1/user/u1"))).status).toBe(503);
  });

  it("is what runConformance's readUser template reads, on a real server", async () => {
    const { handler } = setUp("/ldap/auth");
    const server = createServer(toNodeHandler(handler));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ldap/auth`;
    const report = await runConformance(base, { readUser: `${base}/v1/user/{uuid}` });
    expect(report.results.filter((result) => !result.passed)).toEqual([]);
    expect(report.effectsVerified).toBe(true);
    expect(report.leftBehind).toEqual([]);
  });
});

// Issue 37, finding 7: the documented set-up with a deactivating store failed 10 of 23 checks
// ("delete: 204, but the user is still stored") and its clean-up said every user was deleted.
// The application of the README's "Unique emails, conflicts and deactivation": a unique email, the
// quarantine and deactivation, checked with the conflict check too (conformance --conflicts).
describe("withReadUserRoute over a store that deactivates", () => {
  async function deactivating() {
    const folder = await mkdtemp(join(tmpdir(), "read-route-"));
    const store = new SqliteUserStore(join(folder, "users.db"), {
      onDelete: "deactivate",
      unique: ["email"],
    });
    closers.push(() => {
      store.close();
      void rm(folder, { recursive: true, force: true });
    });
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const handler = withReadUserRoute(
      createProvisioningHandler({ store, quarantine: true, logger }),
      store,
    );
    const server = createServer(toNodeHandler(handler));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    return { store, handler, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it("serves a deactivated user with the deactivated_at marker", async () => {
    const { store, handler } = await deactivating();
    await store.upsert({ uuid: "u1", username: "bob" });
    await store.delete("u1");
    const response = await handler.fetch(get("/v1/user/u1"));
    expect(response.status).toBe(200);
    const deactivatedAt = (await store.get("u1"))?.deactivatedAt;
    expect(deactivatedAt).toEqual(expect.any(String));
    expect(await response.json()).toEqual({
      uuid: "u1",
      username: "bob",
      deactivated_at: deactivatedAt,
    });
  });

  it.each([
    ["over HTTP, reading through the read route's URL", "http", true],
    ["over HTTP, reading through the README's store.get", "http", false],
    ["in-process, reading through the README's store.get", "handler", false],
  ] as const)(
    "passes every check of runConformance with conflicts %s, and reports the rows it left",
    async (_name, over, route) => {
      const { store, handler, url } = await deactivating();
      const report = await runConformance(over === "http" ? url : handler, {
        conflicts: true,
        readUser: route ? `${url}/v1/user/{uuid}` : (uuid) => store.get(uuid),
      });
      expect(report.results.filter((result) => !result.passed)).toEqual([]);
      expect(report.results).toHaveLength(24);
      expect(report.leftBehind).toEqual([]);
      // Each user it created is deleted as the platform sees it, and named as kept deactivated.
      const rows = await store.list({ includeDeactivated: true });
      expect(await store.count()).toBe(0);
      expect(report.deactivated.length).toBeGreaterThan(0);
      expect([...report.deactivated].sort()).toEqual(rows.map((user) => user.uuid).sort());
    },
  );
});
