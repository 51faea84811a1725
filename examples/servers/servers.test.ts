import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { MemoryUserStore } from "platform-integration/provisioning";
import { runConformance } from "platform-integration/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { start as startExpress } from "./express.ts";
import { start as startFastify } from "./fastify.ts";
import { byUuid, syncDirectory } from "./full-sync.ts";
import { start as startHono } from "./hono/node.ts";
import { start as startKoa } from "./koa.ts";
import { openUserStore } from "./main.ts";
import { start as startNodeHttp } from "./node-http.ts";
import type { RunningServer, Start } from "./serve.ts";

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function serve(
  start: Start,
  store = new MemoryUserStore(),
  readUserRoute = false,
  scimToken?: string,
) {
  const server = await start({ port: 0, host: "127.0.0.1", store, readUserRoute, scimToken });
  running.push(server);
  return { ...server, store };
}

const servers: [string, Start, string][] = [
  ["node:http", startNodeHttp, "node:http"],
  ["Express 5", startExpress, "Express"],
  ["Fastify 5", startFastify, "Fastify"],
  ["Koa 3", startKoa, "Koa"],
  ["Hono on @hono/node-server", startHono, "Hono"],
];

describe.each(servers)("%s", (_name, start, greeting) => {
  it("passes every conformance check, effects read back through its opt-in read route", async () => {
    const { url } = await serve(start, new MemoryUserStore(), true);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ldap\/auth$/);
    const report = await runConformance(url, { readUser: `${url}/v1/user/{uuid}` });
    expect(report.results.filter((result) => !result.passed || result.warning)).toEqual([]);
    expect(report).toMatchObject({ passed: true, effectsVerified: true, leftBehind: [] });
  });

  it("serves SCIM from the same store: Entra's and Okta's sequences pass, both APIs see one user", async () => {
    const token = "a-long-random-token";
    const store = new MemoryUserStore({ unique: ["username"], onDelete: "deactivate" });
    const { url } = await serve(start, store, false, token);
    const scim = `${new URL(url).origin}/scim/v2`;
    const report = await runConformance(scim, { scim: { token } });
    expect(report.results.filter((result) => !result.passed || result.warning)).toEqual([]);
    expect(report).toMatchObject({ passed: true, leftBehind: [] });

    // A user the platform pushed is the SCIM user of the same id; SCIM's changes reach the
    // Provisioning API's store, and a userName it holds is taken for SCIM too.
    const created = await fetch(`${url}/v1/user/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "from-platform", username: "bob", email: "bob@acme.test" }),
    });
    expect(created.status).toBe(201);
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/scim+json" };
    const read = await fetch(`${scim}/Users/from-platform`, { headers });
    // Its location leads back to it, whatever the server's mount (Express, Fastify: basePath "").
    expect(await read.json()).toMatchObject({
      id: "from-platform",
      userName: "bob",
      meta: { location: "/scim/v2/Users/from-platform" },
    });
    const duplicate = await fetch(`${scim}/Users`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: "bob",
      }),
    });
    expect(duplicate.status).toBe(409);
    const patched = await fetch(`${scim}/Users/from-platform`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "Replace", path: "active", value: "False" }],
      }),
    });
    expect(patched.ok).toBe(true);
    expect((await store.get("from-platform"))?.deactivatedAt).toEqual(expect.any(String));
  });

  it("serves no SCIM without a token", async () => {
    const { url } = await serve(start);
    const response = await fetch(`${new URL(url).origin}/scim/v2/Users`, {
      headers: { authorization: "Bearer anything" },
    });
    expect(response.status).toBe(404);
  });

  it("serves no read route unless asked", async () => {
    const { url, store } = await serve(start);
    await store.upsert({ uuid: "u1", username: "bob" });
    const response = await fetch(`${url}/v1/user/u1`);
    expect(response.status).toBe(405);
    expect(await response.text()).not.toContain("bob");
  });

  it("stores a 500 kB record (a directory entry with a photo); JSON 404 under the mount", async () => {
    const { url, store } = await serve(start);
    const photo = "A".repeat(500_000);
    const created = await fetch(`${url}/v1/user/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "with-photo", thumbnail_photo: photo }),
    });
    expect(created.status).toBe(201);
    expect((await store.get("with-photo"))?.extra).toEqual({ thumbnail_photo: photo });
    const unknown = await fetch(`${url}/v2/nothing`);
    expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([
      404,
      "not_found",
    ]);
  });

  it("ends a simulated sync with the directory's users in the store", async () => {
    const { url, store } = await serve(start);
    const platform = await syncDirectory(url);
    expect(byUuid(await store.list())).toEqual(byUuid(platform.users()));
  });

  it("serves the application's own page beside the API, and stops", async () => {
    const server = await serve(start);
    const origin = new URL(server.url).origin;
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`Hello from ${greeting}`);
    expect((await fetch(`${origin}/nowhere`)).status).toBe(404);

    running.splice(running.indexOf(server), 1);
    await server.close();
    await expect(fetch(`${server.url}/v1/ping`)).rejects.toThrow();
  });
});

describe("Express 5 behind express.json()", () => {
  it("keeps the application's JSON routes working", async () => {
    const { url } = await serve(startExpress);
    const response = await fetch(new URL("/api/echo", url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ note: "hello" }),
    });
    expect(await response.json()).toEqual({ received: { note: "hello" } });
  });

  it("answers JSON that express.json() rejects in the API's form, logging no body", async () => {
    const { url } = await serve(startExpress);
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const response = await fetch(`${url}/v1/user/create`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"uuid":"u1","password":"hunter2"',
      });
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ error: "invalid_json", message: expect.any(String) });
      expect(text).not.toContain("hunter2");
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});

describe("DATABASE_FILE", () => {
  let folder: string | undefined;
  afterEach(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("keeps the users in the SQLite file across a restart", async () => {
    folder = await mkdtemp(join(tmpdir(), "example-servers-"));
    const file = join(folder, "users.db");
    // One run of the server as main.ts makes it: the store from DATABASE_FILE, closed after.
    const run = async <T>(port: number, work: (url: string) => Promise<T>): Promise<T> => {
      const opened = await openUserStore(file);
      expect(opened.description).toBe(`in the SQLite file ${file}`);
      const server = await startNodeHttp({ port, host: "127.0.0.1", store: opened.store });
      try {
        return await work(server.url);
      } finally {
        await server.close();
        opened.close();
      }
    };

    let port = 0;
    const platform = await run(0, (url) => {
      port = Number(new URL(url).port);
      return syncDirectory(url);
    });
    // After the restart, on the same address, a partial modify merges into what the file kept.
    const [first] = byUuid(platform.users());
    platform.changeUser({ uuid: first!.uuid, email: "restarted@acme.test" });
    await run(port, async () => {
      // The first call may meet the client's pooled connection to the old server, closed: as on
      // the platform, that cycle stops and the next one resumes.
      if (!(await platform.sync()).completed) {
        expect(await platform.sync()).toMatchObject({ completed: true, remaining: 0 });
      }
    });

    const database = new DatabaseSync(file, { readOnly: true });
    try {
      const rows = database
        .prepare("SELECT uuid, username, email FROM provisioned_users ORDER BY uuid")
        .all();
      expect(rows).toEqual(
        byUuid(platform.users()).map(({ uuid, username, email }) => ({
          uuid,
          username: username ?? null,
          email: email ?? null,
        })),
      );
      expect(rows[0]).toMatchObject({ username: first!.username, email: "restarted@acme.test" });
    } finally {
      database.close();
    }
  });

  it("is optional: without it, users are kept in memory", async () => {
    const opened = await openUserStore(undefined);
    expect(opened.store).toBeInstanceOf(MemoryUserStore);
    expect(opened.description).toBe("in memory");
  });
});

// Against the server at PLATFORM_INTEGRATION_PG_URL (.ci/steps/postgres.sh starts one), in a
// schema of its own, dropped at the end: the URL may point at a developer's database.
describe.runIf(process.env.PLATFORM_INTEGRATION_PG_URL)("DATABASE_URL", () => {
  const url = process.env.PLATFORM_INTEGRATION_PG_URL as string;

  it("keeps the users in PostgreSQL across a restart", async () => {
    const schema = `example_servers_${randomUUID().slice(0, 8)}`;
    const admin = new pg.Pool({ connectionString: url });
    await admin.query(`CREATE SCHEMA ${schema}`);
    const inSchema = new URL(url);
    inSchema.searchParams.set("options", `-c search_path=${schema}`);
    const run = async <T>(work: (url: string) => Promise<T>): Promise<T> => {
      const opened = await openUserStore(undefined, inSchema.href);
      expect(opened.description).toBe(`in PostgreSQL at ${inSchema.host}${inSchema.pathname}`);
      const server = await startNodeHttp({ port: 0, host: "127.0.0.1", store: opened.store });
      try {
        return await work(server.url);
      } finally {
        await server.close();
        await opened.close();
      }
    };
    try {
      const platform = await run((serverUrl) => syncDirectory(serverUrl));
      const { rows } = await admin.query(`SELECT uuid, username FROM ${schema}.provisioned_users`);
      expect(byUuid(rows)).toEqual(
        byUuid(platform.users()).map(({ uuid, username }) => ({
          uuid,
          username: username ?? null,
        })),
      );
      // A second start finds the table, and its migrate() keeps what is in it.
      await (await openUserStore(undefined, inSchema.href)).close();
      const after = await admin.query(
        `SELECT count(*)::int AS users FROM ${schema}.provisioned_users`,
      );
      expect(after.rows).toEqual([{ users: platform.users().length }]);
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
