import { beforeEach, describe, expect, it } from "vitest";
import {
  createPlatformSimulator,
  type FetchHandler,
  type PlatformSimulatorOptions,
  type SimulatorSyncProgress,
} from "../../src/testing/index.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const bob = { uuid: "97e86d2d", username: "bob", firstName: "Bob", password: "password123" };
const eve = { uuid: "cn=Ève/ou=R&D?#% +", fullName: "Ève Ångström", email: "eve@acme.test" };

const startServer = serveForEachTest();

/** The application under test behind a socket, or called in-process. */
const targets = {
  "a base URL (real HTTP on 127.0.0.1)": async (handler: FetchHandler) => {
    const server = await startServer((request) => handler.fetch(request));
    return server.url;
  },
  "an in-process handler": async (handler: FetchHandler) => handler,
};

describe.each(Object.entries(targets))("createPlatformSimulator against %s", (_, connect) => {
  let app: ReferenceProvisioning;
  beforeEach(() => {
    app = createReferenceProvisioning();
  });
  const simulator = async (
    options: Omit<PlatformSimulatorOptions, "target"> = {},
    handler: FetchHandler = app,
  ) => createPlatformSimulator({ ...options, target: await connect(handler) });

  it("verifies every user field by field through readUser, and the removed ones gone", async () => {
    const platform = await simulator({ readUser: (uuid) => app.store.get(uuid) });
    platform.addUser(bob);
    platform.addUser(eve);
    platform.addUser({ uuid: "gone", username: "gone" });
    await platform.sync();
    platform.removeUser("gone");
    platform.changeUser({ uuid: bob.uuid, email: "bob@acme.test" });
    expect((await platform.sync()).completed).toBe(true);
    expect(await platform.verify()).toEqual({
      checked: 3,
      complete: true,
      differenceCount: 0,
      differences: [],
    });

    // What the application got wrong behind correct answers: a lost field, a user not deleted.
    await app.store.upsert({ uuid: bob.uuid, email: null });
    await app.store.upsert({ uuid: "gone", username: "gone" });
    const report = await platform.verify();
    expect(report).toEqual({
      checked: 3,
      complete: true,
      differenceCount: 2,
      differences: [
        { uuid: bob.uuid, field: "email", expected: "bob@acme.test" },
        { uuid: "gone", field: "user", problem: "still stored" },
      ],
    });
  });

  it("refuses to verify without readUser", async () => {
    await expect((await simulator()).verify()).rejects.toThrow(/needs the readUser option/);
  });

  it("pings, then creates every user in order with snake_case bodies", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    platform.addUser(eve);
    expect(platform.pending).toBe(2);
    const report = await platform.sync();
    expect(report).toMatchObject({ completed: true, remaining: 0 });
    expect(report.stoppedAt).toBeUndefined();
    expect(report.delivered.map(({ message, status }) => [message.kind, status])).toEqual([
      ["ping", 204],
      ["create", 201],
      ["create", 201],
    ]);
    expect(app.received).toEqual([
      { method: "GET", path: "/v1/ping" },
      {
        method: "POST",
        path: "/v1/user/create",
        body: { uuid: "97e86d2d", username: "bob", first_name: "Bob", password: "password123" },
      },
      {
        method: "POST",
        path: "/v1/user/create",
        body: { uuid: eve.uuid, full_name: "Ève Ångström", email: "eve@acme.test" },
      },
    ]);
    expect(await app.store.list()).toEqual([bob, eve]);
  });

  it("then sends only the changes: changed fields plus uuid, deletes by encoded uuid", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    platform.addUser(eve);
    await platform.sync();
    app.received.length = 0;
    platform.changeUser({ uuid: bob.uuid, firstName: "Robert", username: "bob", email: null });
    platform.changeUser({ uuid: bob.uuid, extra: { department: "R&D" } });
    platform.changeUser({ uuid: bob.uuid, username: "bob" });
    platform.removeUser(eve.uuid);
    platform.addUser({ uuid: "new", username: "zoë" });
    expect(platform.pending).toBe(4);
    const report = await platform.sync();
    expect(report.completed).toBe(true);
    expect(app.received).toEqual([
      { method: "GET", path: "/v1/ping" },
      { method: "POST", path: "/v1/user/modify", body: { uuid: bob.uuid, first_name: "Robert" } },
      { method: "POST", path: "/v1/user/modify", body: { uuid: bob.uuid, department: "R&D" } },
      { method: "DELETE", path: `/v1/user/${encodeURIComponent(eve.uuid)}` },
      { method: "POST", path: "/v1/user/create", body: { uuid: "new", username: "zoë" } },
    ]);
    expect(await app.store.list()).toEqual([
      { ...bob, firstName: "Robert", extra: { department: "R&D" } },
      { uuid: "new", username: "zoë" },
    ]);
    expect(report.delivered.slice(1).map(({ message }) => message)).toEqual([
      { kind: "modify", uuid: bob.uuid, fields: ["first_name"] },
      { kind: "modify", uuid: bob.uuid, fields: ["department"] },
      { kind: "delete", uuid: eve.uuid },
      { kind: "create", uuid: "new", fields: ["username"] },
    ]);
  });

  it("sends a cleared field as null", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    await platform.sync();
    platform.changeUser({ uuid: bob.uuid, password: null });
    await platform.sync();
    expect(app.received.at(-1)?.body).toEqual({ uuid: bob.uuid, password: null });
    expect(await app.store.get(bob.uuid)).toEqual({
      uuid: bob.uuid,
      username: "bob",
      firstName: "Bob",
    });
  });

  it("stops at a ping other than 204 and sends nothing else", async () => {
    const reference = createReferenceProvisioning();
    const platform = await simulator(
      {},
      {
        fetch: async (request) =>
          request.url.endsWith("/v1/ping")
            ? Response.json({ error: "database not ready" }, { status: 503 })
            : reference.fetch(request),
      },
    );
    platform.addUser(bob);
    const report = await platform.sync();
    expect(report).toMatchObject({
      completed: false,
      delivered: [],
      remaining: 1,
      stoppedAt: { message: { kind: "ping" }, status: 503, body: { error: "database not ready" } },
    });
    expect(reference.received).toEqual([]);
  });

  it("stops at a wrong status and resumes with the same message at the next sync", async () => {
    const reference = createReferenceProvisioning();
    let failing = true;
    const platform = await simulator(
      {},
      {
        fetch: async (request) => {
          const body = request.method === "POST" ? await request.clone().text() : "";
          if (failing && body.includes(eve.uuid.slice(0, 6))) {
            return Response.json({ error: "storage down" }, { status: 500 });
          }
          return reference.fetch(request);
        },
      },
    );
    platform.addUser(bob);
    platform.addUser(eve);
    platform.addUser({ uuid: "third" });
    const first = await platform.sync();
    expect(first).toMatchObject({
      completed: false,
      remaining: 2,
      stoppedAt: {
        message: { kind: "create", uuid: eve.uuid },
        attempt: 1,
        status: 500,
        body: { error: "storage down" },
      },
    });
    expect(first.delivered.map(({ message }) => message.uuid)).toEqual([undefined, bob.uuid]);
    failing = false;
    const second = await platform.sync();
    expect(second.completed).toBe(true);
    expect(second.delivered.map(({ message, attempt }) => [message.uuid, attempt])).toEqual([
      [undefined, 1],
      [eve.uuid, 2],
      ["third", 1],
    ]);
    expect((await reference.store.list()).map(({ uuid }) => uuid)).toEqual([
      bob.uuid,
      eve.uuid,
      "third",
    ]);
  });

  it("counts 200 to a create as a failure: only the spec's exact status succeeds", async () => {
    const platform = await simulator(
      {},
      {
        fetch: async (request) =>
          new Response(null, { status: request.url.endsWith("/ping") ? 204 : 200 }),
      },
    );
    platform.addUser(bob);
    expect((await platform.sync()).stoppedAt).toMatchObject({ status: 200 });
  });

  it("drops a request before it reaches the application, then delivers it", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    platform.injectFault({ type: "drop-request", on: "create" });
    const first = await platform.sync();
    expect(first.stoppedAt).toEqual({
      message: { kind: "create", uuid: bob.uuid, fields: ["username", "first_name", "password"] },
      attempt: 1,
      error: "connection dropped before the request (injected fault)",
      durationMs: 0,
    });
    expect(app.received.map(({ path }) => path)).toEqual(["/v1/ping"]);
    const second = await platform.sync();
    expect(second.completed).toBe(true);
    expect(second.delivered[1]).toMatchObject({ attempt: 2, status: 201 });
    expect(await app.store.list()).toEqual([bob]);
  });

  it("drops the answer after the application processed it, so the next sync redelivers", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    await platform.sync();
    platform.removeUser(bob.uuid);
    platform.injectFault({ type: "drop-response", on: "delete" });
    const first = await platform.sync();
    expect(first.stoppedAt).toMatchObject({
      message: { kind: "delete" },
      error: "connection dropped before the answer (injected fault)",
    });
    expect(await app.store.list()).toEqual([]);
    expect((await platform.sync()).delivered[1]).toMatchObject({ attempt: 2, status: 204 });
    expect(app.received.filter(({ method }) => method === "DELETE")).toHaveLength(2);
  });

  it("delivers a message twice in a row for a duplicate fault", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    platform.addUser(eve);
    platform.injectFault({ type: "duplicate", on: "create", times: 1 });
    const report = await platform.sync();
    expect(report.completed).toBe(true);
    expect(report.delivered.map(({ message, attempt }) => [message.kind, attempt])).toEqual([
      ["ping", 1],
      ["create", 1],
      ["create", 2],
      ["create", 1],
    ]);
    expect(await app.store.list()).toEqual([bob, eve]);
  });

  it("applies a fault without `on` to the next message, ping included", async () => {
    const platform = await simulator();
    platform.injectFault({ type: "drop-request", times: 2 });
    expect((await platform.sync()).stoppedAt?.message).toEqual({ kind: "ping" });
    expect((await platform.sync()).stoppedAt?.message).toEqual({ kind: "ping" });
    expect((await platform.sync()).completed).toBe(true);
  });

  it("reports progress after each acknowledged message", async () => {
    const progress: SimulatorSyncProgress[] = [];
    const platform = await simulator({ onProgress: (event) => progress.push(event) });
    platform.addUser(bob);
    platform.addUser(eve);
    await platform.sync();
    expect(progress).toEqual([
      { done: 1, total: 2, message: expect.objectContaining({ uuid: bob.uuid }) },
      { done: 2, total: 2, message: expect.objectContaining({ uuid: eve.uuid }) },
    ]);
  });

  it("resets the application, then sends every user again in place of pending changes", async () => {
    const platform = await simulator();
    platform.addUser(bob);
    platform.addUser(eve);
    await platform.sync();
    platform.removeUser(eve.uuid);
    app.received.length = 0;
    const report = await platform.reset();
    expect(report.completed).toBe(true);
    expect(app.received.map(({ method, path }) => `${method} ${path}`)).toEqual([
      "GET /v1/ping",
      "POST /v1/reset",
      "POST /v1/user/create",
    ]);
    expect(await app.store.list()).toEqual([bob]);
  });
});

describe("createPlatformSimulator", () => {
  it("does what the README shows", async () => {
    const app = createReferenceProvisioning();
    const platform = createPlatformSimulator({ target: app });
    platform.addUser({ uuid: "97e86d2d", username: "bob", email: "bob@acme.test" });
    expect((await platform.sync()).completed).toBe(true);
    platform.changeUser({ uuid: "97e86d2d", email: "robert@acme.test" });
    platform.injectFault({ type: "drop-response", on: "modify" });
    expect((await platform.sync()).stoppedAt?.error).toMatch(/dropped/);
    expect((await platform.sync()).delivered[1]?.attempt).toBe(2);
    expect(app.received.at(-1)?.body).toEqual({ uuid: "97e86d2d", email: "robert@acme.test" });
  });

  it("sends the initial sync from the directory as it is at the first sync", async () => {
    const app = createReferenceProvisioning();
    const platform = createPlatformSimulator({ target: app });
    platform.addUser(bob);
    platform.addUser(eve);
    platform.changeUser({ uuid: bob.uuid, firstName: "Robert" });
    platform.removeUser(eve.uuid);
    expect(platform.pending).toBe(1);
    await platform.sync();
    expect(app.received.map(({ body }) => body)).toEqual([
      undefined,
      { uuid: bob.uuid, username: "bob", first_name: "Robert", password: "password123" },
    ]);
  });

  it("delivers a change made during a cycle in that same cycle", async () => {
    const progress: [number, number][] = [];
    const platform = createPlatformSimulator({
      target: createReferenceProvisioning(),
      onProgress: ({ done, total }) => {
        progress.push([done, total]);
        if (done === 1) platform.addUser({ uuid: "late" });
      },
    });
    platform.addUser(bob);
    platform.addUser(eve);
    expect((await platform.sync()).delivered.map(({ message }) => message.uuid)).toEqual([
      undefined,
      bob.uuid,
      eve.uuid,
      "late",
    ]);
    expect(progress).toEqual([
      [1, 2],
      [2, 3],
      [3, 3],
    ]);
  });

  it("queues nothing for a change that changes nothing", async () => {
    const platform = createPlatformSimulator({ target: createReferenceProvisioning() });
    platform.addUser(bob);
    await platform.sync();
    platform.changeUser({ uuid: bob.uuid, username: "bob", extra: {} });
    expect(platform.pending).toBe(0);
  });

  it("keeps a directory that tests can read, as copies", () => {
    const platform = createPlatformSimulator({ target: createReferenceProvisioning() });
    platform.apply({ type: "add", user: bob });
    const [user] = platform.users();
    user!.username = "mallory";
    expect(platform.users()).toEqual([bob]);
  });

  it("throws on a change the directory cannot make", () => {
    const platform = createPlatformSimulator({ target: createReferenceProvisioning() });
    platform.addUser(bob);
    expect(() => platform.addUser(bob)).toThrow(/already has a user 97e86d2d/);
    expect(() => platform.changeUser({ uuid: "ghost", username: "x" })).toThrow(/no user ghost/);
    expect(() => platform.removeUser("ghost")).toThrow(/no user ghost/);
  });

  it("runs one cycle at a time", async () => {
    let answer = (_: Response) => {};
    const answered = new Promise<Response>((resolve) => {
      answer = resolve;
    });
    const platform = createPlatformSimulator({ target: { fetch: () => answered } });
    const running = platform.sync();
    await expect(platform.sync()).rejects.toThrow(/one cycle at a time/);
    await expect(platform.reset()).rejects.toThrow(/one cycle at a time/);
    answer(new Response(null, { status: 204 }));
    expect((await running).completed).toBe(true);
  });

  it("calls the endpoints under the path of a provisioner URL", async () => {
    const app = createReferenceProvisioning("/ldap/auth");
    const server = await startServer(app.fetch);
    const platform = createPlatformSimulator({ target: `${server.url}/ldap/auth/` });
    platform.addUser(bob);
    expect((await platform.sync()).completed).toBe(true);
    expect(app.received.map(({ path }) => path)).toEqual([
      "/ldap/auth/v1/ping",
      "/ldap/auth/v1/user/create",
    ]);
  });

  it("reports a refused connection as an error and keeps the message", async () => {
    const server = await startServer(createReferenceProvisioning().fetch);
    await server.close();
    const platform = createPlatformSimulator({ target: server.url });
    platform.addUser(bob);
    const report = await platform.sync();
    expect(report.stoppedAt).toMatchObject({ message: { kind: "ping" } });
    expect(report.stoppedAt?.error).toMatch(/ECONNREFUSED/);
    expect(platform.pending).toBe(1);
  });

  it("gives up on a call that gets no answer within timeoutMs", async () => {
    const platform = createPlatformSimulator({
      target: { fetch: () => new Promise<Response>(() => {}) },
      timeoutMs: 20,
    });
    expect((await platform.sync()).stoppedAt?.error).toBe("no answer within 20 ms");
  });

  it("stops when its signal aborts", async () => {
    const controller = new AbortController();
    const platform = createPlatformSimulator({
      target: {
        fetch: async () => {
          controller.abort();
          return new Promise<Response>(() => {});
        },
      },
    });
    const report = await platform.sync({ signal: controller.signal });
    expect(report.stoppedAt?.error).toBe("aborted");
  });

  it("redacts the message's password from an error body that echoes it", async () => {
    const platform = createPlatformSimulator({
      target: {
        fetch: async (request) => {
          if (request.method === "GET") return new Response(null, { status: 204 });
          const body = await request.text();
          return Response.json({ error: "rejected", received: JSON.parse(body) }, { status: 422 });
        },
      },
    });
    platform.addUser(bob);
    const report = await platform.sync();
    expect(JSON.stringify(report)).not.toContain("password123");
    expect(report.stoppedAt?.body).toMatchObject({ received: { password: "[redacted]" } });
  });

  it("refuses a target that is not an http(s) URL", () => {
    expect(() => createPlatformSimulator({ target: "not a url" })).toThrow(
      /is not an absolute URL/,
    );
    expect(() => createPlatformSimulator({ target: "ftp://host" })).toThrow(
      "must be an http(s) URL, not ftp:",
    );
  });
});
