import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node/index.ts";
import {
  createDirectorySync,
  type DirectoryChanges,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
  type DirectorySync,
  StateFileError,
  StateMismatchError,
  type SyncTargetOptions,
} from "../../src/ldap/index.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type UserRecord,
} from "../../src/provisioning/index.ts";
import { type FaultyClient, withFaults } from "../../src/testing/faults.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { serveSelfSignedForEachTest } from "../support/self-signed-server.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

/** A directory in memory, read in pages of 2 as a paged LDAP search would, in a stable order. */
function memoryDirectory(
  users: UserRecord[],
  identity = "memory",
): DirectorySource & {
  users: UserRecord[];
  reads: number;
  failWith: Error | undefined;
} {
  const directory = {
    users,
    reads: 0,
    failWith: undefined as Error | undefined,
    identity,
    async *read({ uuidsOnly }: { uuidsOnly: boolean }): AsyncGenerator<DirectoryPage> {
      directory.reads++;
      for (let index = 0; index < directory.users.length; index += 2) {
        if (directory.failWith && index > 0) throw directory.failWith;
        const page = directory.users.slice(index, index + 2).map((user) => structuredClone(user));
        yield { users: uuidsOnly ? page.map(({ uuid }) => ({ uuid })) : page, skipped: [] };
      }
    },
  };
  return directory;
}

const people = (count: number): UserRecord[] =>
  Array.from({ length: count }, (_, index) => ({
    uuid: `u${index}`,
    username: `user${index}`,
    firstName: index % 2 ? "Zoë" : "José",
    ...(index % 3 !== 0 && { email: `user${index}@example.test` }),
  }));

const startServer = serveForEachTest();
const startSelfSigned = serveSelfSignedForEachTest();
let folder: string;
let app: ReferenceProvisioning;
let appUrl: string | undefined;
const syncs: DirectorySync[] = [];
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "directory-sync-"));
  app = createReferenceProvisioning();
  appUrl = undefined;
});
afterEach(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.close()));
  rmSync(folder, { recursive: true, force: true });
});

async function open(
  source: DirectorySource,
  options: {
    target?: string;
    resetRequest?: boolean;
    adoptState?: boolean;
    wrapClient?: SyncTargetOptions["wrapClient"];
    deleteGuard?: SyncTargetOptions["deleteGuard"];
  } = {},
) {
  appUrl ??= (await startServer((request) => app.fetch(request))).url;
  const target = options.target ?? appUrl;
  const sync = createDirectorySync({
    source,
    target,
    state: join(folder, "state.sqlite"),
    ...(options.resetRequest && { resetRequest: true }),
    ...(options.adoptState && { adoptState: true }),
    ...(options.wrapClient && { wrapClient: options.wrapClient }),
    ...(options.deleteGuard !== undefined && { deleteGuard: options.deleteGuard }),
  });
  syncs.push(sync);
  return sync;
}

const calls = () => app.received.map(({ method, path }) => `${method} ${path}`);

describe("createDirectorySync over a directory source", () => {
  it("creates every user in the directory's order after a ping, then finds nothing to send", async () => {
    const directory = memoryDirectory(people(5));
    const sync = await open(directory);
    const first = await sync.syncOnce();
    expect(first).toMatchObject({ completed: true, mode: "initial", created: 5, failed: 0 });
    expect(calls()).toEqual(["GET /v1/ping", ...Array(5).fill("POST /v1/user/create")]);
    expect(app.received.slice(1).map(({ body }) => (body as { uuid: string }).uuid)).toEqual([
      "u0",
      "u1",
      "u2",
      "u3",
      "u4",
    ]);
    expect(await app.store.list()).toEqual(directory.users);

    app.received.length = 0;
    const second = await sync.syncOnce();
    expect(second).toMatchObject({ completed: true, mode: "update", created: 0, unchanged: 5 });
    expect(calls()).toEqual(["GET /v1/ping"]);
  });

  it("sends deletes first, then modifies with only the changed fields and creates, in order", async () => {
    const directory = memoryDirectory(people(4));
    const sync = await open(directory);
    await sync.syncOnce();
    app.received.length = 0;
    const [u0, u1, , u3] = directory.users as UserRecord[];
    // u1 renamed (same uuid), u0's mail removed, u2 deleted, u3 untouched, u9 new.
    directory.users = [
      { ...(u0 as UserRecord), email: "new@example.test", firstName: "Anna" },
      { uuid: "u1", username: "renamed", firstName: (u1 as UserRecord).firstName },
      u3 as UserRecord,
      { uuid: "u9", username: "newcomer" },
    ].map((user) => JSON.parse(JSON.stringify(user)));
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ created: 1, modified: 2, deleted: 1, unchanged: 1 });
    expect(app.received.slice(1)).toEqual([
      { method: "DELETE", path: "/v1/user/u2" },
      {
        method: "POST",
        path: "/v1/user/modify",
        body: { uuid: "u0", first_name: "Anna", email: "new@example.test" },
      },
      {
        method: "POST",
        path: "/v1/user/modify",
        body: { uuid: "u1", username: "renamed", email: null },
      },
      { method: "POST", path: "/v1/user/create", body: { uuid: "u9", username: "newcomer" } },
    ]);
    expect((await app.store.list()).sort((a, b) => a.uuid.localeCompare(b.uuid))).toEqual(
      [...directory.users].sort((a, b) => a.uuid.localeCompare(b.uuid)),
    );
  });

  it("compares list and object fields by value: unchanged ones send nothing, a changed one goes whole", async () => {
    const user: UserRecord = {
      uuid: "u0",
      username: "user0",
      extra: { groups: ["a", "b"], manager: { uuid: "m1" } },
    };
    const directory = memoryDirectory([user]);
    const sync = await open(directory);
    await sync.syncOnce();
    expect(await sync.syncOnce()).toMatchObject({ modified: 0, unchanged: 1 });
    directory.users = [{ ...user, extra: { groups: ["a", "c"], manager: { uuid: "m1" } } }];
    app.received.length = 0;
    expect(await sync.syncOnce()).toMatchObject({ modified: 1, unchanged: 0 });
    expect(app.received.slice(1)).toEqual([
      { method: "POST", path: "/v1/user/modify", body: { uuid: "u0", groups: ["a", "c"] } },
    ]);
  });

  it("stops at the first failed answer and starts the next cycle with that same message", async () => {
    const directory = memoryDirectory(people(6));
    let failing = 0;
    const server = await startServer(async (request) => {
      const body = request.method === "POST" ? await request.clone().text() : "";
      // u2's create fails three times: the application is briefly unavailable.
      if (body.includes('"u2"') && failing < 3) {
        failing++;
        return Response.json({ error: "starting up" }, { status: 503 });
      }
      return app.fetch(request);
    });
    const sync = await open(directory, { target: server.url });
    const reports = [];
    for (let cycle = 0; cycle < 4; cycle++) reports.push(await sync.syncOnce());
    expect(reports.map(({ completed }) => completed)).toEqual([false, false, false, true]);
    expect(reports.slice(0, 3).map(({ stoppedAt }) => stoppedAt)).toMatchObject([
      { message: { kind: "create", uuid: "u2" }, attempt: 1, status: 503 },
      { message: { kind: "create", uuid: "u2" }, attempt: 2, status: 503 },
      { message: { kind: "create", uuid: "u2" }, attempt: 3, status: 503 },
    ]);
    expect(reports[0]).toMatchObject({ created: 2, failed: 1 });
    expect(reports[3]).toMatchObject({ created: 4, unchanged: 2, failed: 0 });
    // Nothing lost, nothing out of order, nothing acknowledged sent twice.
    const creates = app.received.filter(({ path }) => path === "/v1/user/create");
    expect(creates.map(({ body }) => (body as { uuid: string }).uuid)).toEqual(
      directory.users.map(({ uuid }) => uuid),
    );
  });

  it("counts a 2xx other than the spec's as a failure, as the platform does", async () => {
    const server = await startServer(async (request) =>
      request.method === "POST" ? new Response(null, { status: 200 }) : app.fetch(request),
    );
    const sync = await open(memoryDirectory(people(2)), { target: server.url });
    expect((await sync.syncOnce()).stoppedAt).toMatchObject({
      message: { kind: "create", uuid: "u0" },
      status: 200,
    });
  });

  it("sends every message through the client wrapClient returns: a test's lost answer", async () => {
    const directory = memoryDirectory(people(2));
    let faults: FaultyClient | undefined;
    const sync = await open(directory, { wrapClient: (client) => (faults = withFaults(client)) });
    faults?.injectFault({ type: "drop-response", on: "create" });
    expect((await sync.syncOnce()).stoppedAt).toMatchObject({
      message: { kind: "create", uuid: "u0" },
      attempt: 1,
      error: "connection dropped before the answer (injected fault)",
    });
    expect((await app.store.list()).map(({ uuid }) => uuid)).toEqual(["u0"]);
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 2 });
    expect(calls()).toEqual([
      "GET /v1/ping",
      "POST /v1/user/create",
      "GET /v1/ping",
      "POST /v1/user/create",
      "POST /v1/user/create",
    ]);
  });

  it("resumes after a restart from its state file, resending only the unacknowledged message", async () => {
    const directory = memoryDirectory(people(6));
    let faults: FaultyClient | undefined;
    const first = await open(directory, {
      wrapClient: (client) => (faults = withFaults(client)),
    });
    faults?.injectFault({ type: "drop-response", on: "create", times: 1 });
    await first.syncOnce(); // u0 was stored, its answer lost: the cycle stops there
    faults?.injectFault({ type: "duplicate", on: "create" });
    const stopped = await first.syncOnce();
    expect(stopped.completed).toBe(true);
    await first.close();
    syncs.length = 0;

    app.received.length = 0;
    directory.users.push({ uuid: "u6", username: "late" });
    const restarted = await open(directory);
    const report = await restarted.syncOnce();
    expect(report).toMatchObject({ mode: "update", created: 1, unchanged: 6 });
    expect(calls()).toEqual(["GET /v1/ping", "POST /v1/user/create"]);
  });

  it("keeps only a digest of passwords in its state file, and still sends a changed one", async () => {
    const directory = memoryDirectory([
      { uuid: "p1", username: "pat", password: "correct horse", passwordFormat: "plain" },
    ]);
    const sync = await open(directory);
    await sync.syncOnce();
    await sync.close();
    syncs.length = 0;
    const file = readFileSync(join(folder, "state.sqlite"));
    expect(file.includes("correct horse")).toBe(false);

    (directory.users[0] as UserRecord).password = "battery staple";
    const reopened = await open(directory);
    app.received.length = 0;
    await reopened.syncOnce();
    expect(app.received[1]).toEqual({
      method: "POST",
      path: "/v1/user/modify",
      body: { uuid: "p1", password: "battery staple" },
    });
  });

  it("refuses a state file kept for another target, unless a full re-sync adopts it", async () => {
    const directory = memoryDirectory(people(1));
    await (await open(directory)).syncOnce();
    await Promise.all(syncs.splice(0).map((sync) => sync.close()));
    const other = await startServer((request) => app.fetch(request));
    await expect(open(directory, { target: other.url })).rejects.toThrow(StateMismatchError);
    await expect(open(directory, { target: other.url })).rejects.toThrow(
      /state file of this directory and application, or take this one over with a full re-sync .*refused unless allowDeleteAll/,
    );
    await expect(open(directory, { target: other.url, adoptState: true })).resolves.toBeDefined();
  });

  it("closes once: a second close neither throws nor leaves the state file locked", async () => {
    const directory = memoryDirectory(people(1));
    const sync = await open(directory);
    await sync.syncOnce();
    await sync.close();
    await expect(sync.close()).resolves.toBeUndefined();
    syncs.length = 0;
    await expect(open(directory)).resolves.toBeDefined();
  });

  it("refuses a second sync on a state file in use, which would send every change twice", async () => {
    const directory = memoryDirectory(people(1));
    await open(directory);
    await expect(open(directory)).rejects.toThrow(/in use by another sync/);
  });

  it("runs a full re-sync: POST /v1/reset when opted in (which removes the gone), a create for every user", async () => {
    const directory = memoryDirectory(people(3));
    const sync = await open(directory, { resetRequest: true });
    await sync.syncOnce();
    directory.users.splice(1, 1);
    app.received.length = 0;
    sync.requestResync();
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ mode: "full", completed: true, created: 2, deleted: 1 });
    // The directory is read before the reset: u1, which it no longer returns, is gone with the
    // reset and needs no delete of its own, and the report counts it.
    expect(calls()).toEqual([
      "GET /v1/ping",
      "POST /v1/reset",
      "POST /v1/user/create",
      "POST /v1/user/create",
    ]);
    app.received.length = 0;
    expect(await sync.syncOnce()).toMatchObject({ mode: "update", unchanged: 2 });
  });

  it("re-syncs without POST /v1/reset unless the application opted in", async () => {
    const directory = memoryDirectory(people(2));
    const sync = await open(directory);
    await sync.syncOnce();
    app.received.length = 0;
    sync.requestResync();
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", created: 2 });
    expect(calls()).toEqual(["GET /v1/ping", "POST /v1/user/create", "POST /v1/user/create"]);
  });

  it("refuses to delete every user when the directory suddenly reads empty", async () => {
    const directory = memoryDirectory(people(3));
    const sync = await open(directory);
    await sync.syncOnce();
    directory.users = [];
    app.received.length = 0;
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: false, deleted: 0, failed: 1 });
    expect(report.deleteGuard).toMatchObject({ deletes: 3, held: 3 });
    expect(report.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(calls()).toEqual(["GET /v1/ping"]);
    expect(await app.store.list()).toHaveLength(3);
  });

  it("reports a directory that fails mid-read, having sent only what it read", async () => {
    const directory = memoryDirectory(people(4));
    directory.failWith = new DirectoryError("connection reset", { fatal: false });
    const sync = await open(directory);
    const report = await sync.syncOnce();
    expect(report).toMatchObject({
      completed: false,
      created: 2,
      directoryError: "connection reset",
    });
    directory.failWith = undefined;
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 2, unchanged: 2 });
  });

  it("rejects on a failure retrying cannot fix", async () => {
    const directory = memoryDirectory(people(3));
    directory.failWith = new DirectoryError("bind refused: check the password", { fatal: true });
    const sync = await open(directory);
    await expect(sync.syncOnce()).rejects.toThrow("bind refused");
  });

  it("verifies every directory user read back, page after page, in the directory's order", async () => {
    const directory = memoryDirectory(people(5));
    const sync = await open(directory);
    await sync.syncOnce();
    const readBack = async (uuid: string) => app.store.get(uuid);
    expect(await sync.verify(readBack)).toEqual({
      checked: 5,
      complete: true,
      differenceCount: 0,
      differences: [],
    });
    await app.store.upsert({ uuid: "u4", username: "changed" });
    await app.store.delete("u1");
    expect(await sync.verify(readBack)).toEqual({
      checked: 5,
      complete: true,
      differenceCount: 2,
      differences: [
        { uuid: "u1", field: "user", problem: "missing" },
        { uuid: "u4", field: "username", expected: "user4", found: "changed" },
      ],
    });
  });

  it("counts every entry it skips, lists the first 100, and counts them as read", async () => {
    const directory: DirectorySource = {
      identity: "skipping",
      async *read() {
        // Three pages of 2 users and 60 entries without a uuid each.
        for (let page = 0; page < 3; page++) {
          yield {
            users: people(6).slice(page * 2, page * 2 + 2),
            skipped: Array.from({ length: 60 }, (_, index) => ({
              dn: `cn=nouuid${page * 60 + index}`,
              reason: "it has no uuid attribute",
            })),
          };
        }
      },
    };
    const progress: number[] = [];
    appUrl ??= (await startServer((request) => app.fetch(request))).url;
    const sync = createDirectorySync({
      source: directory,
      target: appUrl,
      state: join(folder, "state.sqlite"),
      onProgress: ({ read }) => progress.push(read),
    });
    syncs.push(sync);
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: true, created: 6, skipped: 180 });
    expect(report.skippedEntries).toHaveLength(100);
    expect(report.skippedEntries[0]).toEqual({
      dn: "cn=nouuid0",
      reason: "it has no uuid attribute",
    });
    expect(report.skippedEntries.at(-1)?.dn).toBe("cn=nouuid99");
    expect(progress.at(-1)).toBe(186);
  });

  it("refuses target certificates that are not PEM, or for a handler in-process, before it opens the state file", async () => {
    const state = join(folder, "state.sqlite");
    const source = memoryDirectory(people(1));
    expect(() =>
      createDirectorySync({
        source,
        target: "https://127.0.0.1:1",
        state,
        targetTls: { ca: "not a certificate" },
      }),
    ).toThrow(
      new TypeError("targetTls.ca must be PEM certificate text (-----BEGIN CERTIFICATE-----...)."),
    );
    expect(() =>
      createDirectorySync({
        source,
        target: { fetch: (request: Request) => app.fetch(request) },
        state,
        targetTls: { ca: "-----BEGIN CERTIFICATE-----\n..." },
      }),
    ).toThrow(/targetTls\.ca is for an https:\/\/ target, not a handler called in-process/);
    // Neither left the state file open: a sync may take it.
    const sync = await open(source);
    await expect(sync.syncOnce()).resolves.toMatchObject({ completed: true, created: 1 });
  });

  it("syncs into an https:// application whose certificate it was given", async () => {
    const store = new MemoryUserStore();
    const { url, cert } = await startSelfSigned(
      toNodeHandler(createProvisioningHandler({ store })),
    );
    const sync = createDirectorySync({
      source: memoryDirectory(people(3)),
      target: url,
      state: join(folder, "https.sqlite"),
      targetTls: { ca: cert },
    });
    syncs.push(sync);
    await expect(sync.syncOnce()).resolves.toMatchObject({ completed: true, created: 3 });
    expect((await store.list()).map(({ uuid }) => uuid)).toEqual(["u0", "u1", "u2"]);
  });

  it("stops for good, once, when the application's certificate is not trusted, with the fix", async () => {
    const { url: target } = await startSelfSigned();
    const sync = createDirectorySync({
      source: memoryDirectory(people(3)),
      target,
      state: join(folder, "untrusted.sqlite"),
    });
    syncs.push(sync);
    const untrusted = {
      name: "TargetError",
      fatal: true,
      message: expect.stringMatching(
        new RegExp(
          `^The Provisioning API at ${target}: .*: the application's certificate is not trusted; pass its CA certificate \\(targetTls\\.ca, sync --target-ca FILE\\)$`,
        ),
      ),
    };
    await expect(sync.syncOnce()).rejects.toMatchObject(untrusted);
    // An interval sync ends with it rather than meeting it every cycle.
    const cycles: unknown[] = [];
    await expect(
      sync.run({ intervalMs: 1, onCycle: (report) => cycles.push(report) }),
    ).rejects.toMatchObject(untrusted);
    expect(cycles).toEqual([]);
  });

  it("runs one cycle at a time", async () => {
    const sync = await open(memoryDirectory(people(3)));
    const first = sync.syncOnce();
    await expect(sync.syncOnce()).rejects.toThrow("A cycle is running: cycles run one at a time");
    await expect(first).resolves.toMatchObject({ completed: true, created: 3 });
    // Once it ended, the next may start.
    await expect(sync.syncOnce()).resolves.toMatchObject({ completed: true, unchanged: 3 });
  });

  it("repeats cycles every interval until aborted", async () => {
    const directory = memoryDirectory(people(1));
    const sync = await open(directory);
    const controller = new AbortController();
    const modes: string[] = [];
    await sync.run({
      intervalMs: 1,
      signal: controller.signal,
      onCycle: (report) => {
        modes.push(report.mode);
        if (modes.length === 3) controller.abort();
      },
    });
    expect(modes).toEqual(["initial", "update", "update"]);
  });
});

/**
 * A change feed whose answers the test scripts: `next` is what the coming `changesSince` returns,
 * `now` what `cookieNow` returns; the cookies it was asked about are kept in order, and `taken`
 * counts the cookies taken.
 */
function scriptedFeed() {
  const feed = {
    scope: "scope-1",
    now: { cookie: "c0" } as { cookie: string } | { note?: string },
    next: { note: "nothing scripted" } as DirectoryChanges | { note: string },
    asked: [] as string[],
    taken: 0,
    async cookieNow() {
      feed.taken++;
      return feed.now;
    },
    async changesSince(cookie: string) {
      feed.asked.push(cookie);
      return feed.next;
    },
  };
  return feed;
}

/**
 * A directory with a scripted change feed, synced: the initial sync, which takes no cookie, then
 * an update cycle that reads the whole directory and takes cookie c0.
 */
async function syncedWithFeed(
  count: number,
  options: { target?: string; deleteGuard?: SyncTargetOptions["deleteGuard"] } = {},
) {
  const directory = memoryDirectory(people(count));
  const feed = scriptedFeed();
  const source: DirectorySource = Object.assign(directory, { changes: feed });
  const sync = await open(source, options);
  expect(await sync.syncOnce()).toMatchObject({ completed: true, mode: "initial", read: "full" });
  expect(feed.taken).toBe(0);
  expect(await sync.syncOnce()).toMatchObject({ completed: true, mode: "update", read: "full" });
  expect(feed.taken).toBe(1);
  app.received.length = 0;
  directory.reads = 0;
  return { directory, feed, sync };
}

const bodies = () => app.received.slice(1).map(({ body }) => body);

describe("update cycles from a change feed (Content Sync)", () => {
  it("sends only the changes since the cookie, deletes first, and keeps the next cookie once all are acknowledged", async () => {
    const { directory, feed, sync } = await syncedWithFeed(4);
    feed.next = {
      changed: [
        { ...(directory.users[0] as UserRecord), firstName: "Anna" },
        people(10)[9] as UserRecord,
      ],
      skipped: [{ dn: "cn=nouuid", reason: "it has no uuid attribute" }],
      // u7 was never acknowledged: no delete goes out for it.
      deleted: ["u2", "u7"],
      cookie: "c1",
    };
    const report = await sync.syncOnce();
    expect(report).toMatchObject({
      completed: true,
      mode: "update",
      read: "content-sync",
      created: 1,
      modified: 1,
      deleted: 1,
      // u1 and u3: held, and nothing sent for them.
      unchanged: 2,
      skipped: 1,
    });
    expect(report.readNote).toBeUndefined();
    expect(calls()).toEqual([
      "GET /v1/ping",
      "DELETE /v1/user/u2",
      "POST /v1/user/modify",
      "POST /v1/user/create",
    ]);
    expect(bodies()[1]).toEqual({ uuid: "u0", first_name: "Anna" });
    // The directory itself was not read.
    expect(directory.reads).toBe(0);
    expect(feed.asked).toEqual(["c0"]);

    feed.next = { changed: [], skipped: [], deleted: [], cookie: "c1" };
    expect(await sync.syncOnce()).toMatchObject({ read: "content-sync", unchanged: 4 });
    expect(feed.asked).toEqual(["c0", "c1"]);
  });

  it("deletes after a present phase every acknowledged user neither present nor changed, and refuses an empty one", async () => {
    const { directory, feed, sync } = await syncedWithFeed(4);
    feed.next = {
      changed: [{ ...(directory.users[1] as UserRecord), username: "renamed" }],
      skipped: [],
      deleted: [],
      present: ["u0"],
      cookie: "c1",
    };
    expect(await sync.syncOnce()).toMatchObject({ read: "content-sync", deleted: 2, modified: 1 });
    expect(calls()).toEqual([
      "GET /v1/ping",
      "DELETE /v1/user/u2",
      "DELETE /v1/user/u3",
      "POST /v1/user/modify",
    ]);
    expect((await app.store.list()).map(({ uuid }) => uuid)).toEqual(["u0", "u1"]);

    app.received.length = 0;
    feed.next = { changed: [], skipped: [], deleted: [], present: [], cookie: "c2" };
    const empty = await sync.syncOnce();
    expect(empty.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(calls()).toEqual(["GET /v1/ping"]);
    // The refused cycle did not complete: the cookie stays.
    feed.next = { changed: [], skipped: [], deleted: [], cookie: "c3" };
    await sync.syncOnce();
    expect(feed.asked).toEqual(["c0", "c1", "c1"]);
  });

  it("deletes a user both deleted and not present once, and the guard counts it once", async () => {
    const { feed, sync } = await syncedWithFeed(4);
    feed.next = { changed: [], skipped: [], deleted: ["u3"], present: ["u0", "u1"], cookie: "c1" };
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 2 });
    expect(calls()).toEqual(["GET /v1/ping", "DELETE /v1/user/u2", "DELETE /v1/user/u3"]);
  });

  it("guards the unseen and the deleted together, before a delete is sent", async () => {
    const { feed, sync } = await syncedWithFeed(4, { deleteGuard: { maxDeletes: 1 } });
    feed.next = { changed: [], skipped: [], deleted: ["u3"], present: ["u0", "u1"], cookie: "c1" };
    const report = await sync.syncOnce();
    expect(report.deleteGuard).toMatchObject({ deletes: 2, held: 4 });
    expect(calls()).toEqual(["GET /v1/ping"]);
  });

  it("reports the accounts a change read left out", async () => {
    const { feed, sync } = await syncedWithFeed(2);
    feed.next = {
      changed: [people(3)[2] as UserRecord],
      skipped: [{ dn: "cn=nouuid", reason: "it has no uuid attribute" }],
      deleted: [],
      disabled: 2,
      nonUsers: 1,
      cookie: "c1",
    };
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ read: "content-sync", disabled: 2, nonUsers: 1, created: 1 });
  });

  it("keeps the cookie of a cycle stopped by a failed answer: the next cycle resends that message", async () => {
    let failing = 0;
    const server = await startServer(async (request) => {
      const body = request.method === "POST" ? await request.clone().text() : "";
      if (body.includes('"u8"') && failing < 2) {
        failing++;
        return new Response(null, { status: 503 });
      }
      return app.fetch(request);
    });
    const { feed, sync } = await syncedWithFeed(3, { target: server.url });
    const [, , , , , , , u7, u8, u9] = people(10) as UserRecord[];
    feed.next = { changed: [u7, u8, u9] as UserRecord[], skipped: [], deleted: [], cookie: "c1" };
    const reports = [await sync.syncOnce(), await sync.syncOnce(), await sync.syncOnce()];
    expect(reports.map(({ completed, read }) => [completed, read])).toEqual([
      [false, "content-sync"],
      [false, "content-sync"],
      [true, "content-sync"],
    ]);
    expect(reports.slice(0, 2).map(({ stoppedAt }) => stoppedAt?.message)).toEqual([
      { kind: "create", uuid: "u8", fields: expect.any(Array) },
      { kind: "create", uuid: "u8", fields: expect.any(Array) },
    ]);
    expect(feed.asked).toEqual(["c0", "c0", "c0"]);
    // u7 acknowledged once is not sent again: the diff is against the acknowledged state.
    const creates = app.received.filter(({ path }) => path === "/v1/user/create");
    expect(creates.map(({ body }) => (body as { uuid: string }).uuid)).toEqual(["u7", "u8", "u9"]);
    expect(reports[2]).toMatchObject({ created: 2, unchanged: 4 });
    await sync.syncOnce();
    expect(feed.asked).toEqual(["c0", "c0", "c0", "c1"]);
  });

  it("reads the whole directory when the feed cannot serve, says why, and keeps the cookie taken before that read", async () => {
    const { directory, feed, sync } = await syncedWithFeed(3);
    directory.users.splice(1, 1);
    feed.next = { note: "the server asked for a full reload" };
    feed.now = { cookie: "c5" };
    const report = await sync.syncOnce();
    expect(report).toMatchObject({
      completed: true,
      read: "full",
      readNote: "the server asked for a full reload",
      deleted: 1,
      unchanged: 2,
    });
    // uuids, then entries: the diff mode's two reads.
    expect(directory.reads).toBe(2);
    feed.next = { changed: [], skipped: [], deleted: [], cookie: "c6" };
    expect(await sync.syncOnce()).toMatchObject({ read: "content-sync" });
    expect(feed.asked).toEqual(["c0", "c5"]);
  });

  it("does not use a cookie kept for another scope, nor one from before a full re-sync", async () => {
    const { directory, feed, sync } = await syncedWithFeed(2);
    feed.scope = "scope-2";
    feed.now = { note: "no cookie today" };
    expect(await sync.syncOnce()).toMatchObject({ read: "full", readNote: "no cookie today" });
    expect(feed.asked).toEqual([]);
    // No cookie was taken: the next cycle reads everything again, without a note.
    feed.now = {};
    const again = await sync.syncOnce();
    expect(again.read).toBe("full");
    expect(again.readNote).toBeUndefined();
    feed.now = { cookie: "c1" };
    await sync.syncOnce();
    sync.requestResync();
    feed.now = { cookie: "c2" };
    directory.reads = 0;
    const taken = feed.taken;
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", read: "full", created: 2 });
    expect(directory.reads).toBe(2);
    // A full re-sync takes no cookie; the update cycle after it reads everything and takes c2.
    expect(feed.taken).toBe(taken);
    expect(await sync.syncOnce()).toMatchObject({ mode: "update", read: "full" });
    expect(feed.asked).toEqual([]);
    feed.next = { changed: [], skipped: [], deleted: [], cookie: "c3" };
    await sync.syncOnce();
    expect(feed.asked).toEqual(["c2"]);
  });
});

/**
 * The reference application behind a unique constraint on usernames, as real applications keep:
 * a create or modify that would give a user a username another user holds is answered 409.
 */
async function uniqueUsernames(
  options: { refuse?: (body: Record<string, unknown>) => number | undefined } = {},
) {
  const server = await startServer(async (request) => {
    if (request.method === "POST" && request.url.includes("/v1/user/")) {
      const body = (await request.clone().json()) as Record<string, unknown>;
      const refusal = options.refuse?.(body);
      if (refusal !== undefined) {
        return Response.json({ error: `refused ${body.uuid}` }, { status: refusal });
      }
      const holder = (await app.store.list()).find(
        (user) => user.username === body.username && user.uuid !== body.uuid,
      );
      if (typeof body.username === "string" && holder) {
        app.received.push({ method: request.method, path: new URL(request.url).pathname, body });
        return Response.json({ error: `username ${body.username} is taken` }, { status: 409 });
      }
    }
    return app.fetch(request);
  });
  return server.url;
}

const byUuid = (a: UserRecord, b: UserRecord) => a.uuid.localeCompare(b.uuid);

describe("refusals (4xx) hold one user's message, not the directory", () => {
  it("goes on with the other users after a 409, reports the refusal, and sends it again next cycle", async () => {
    let refusing = true;
    const target = await uniqueUsernames({
      refuse: (body) => (refusing && body.uuid === "u1" ? 422 : undefined),
    });
    const directory = memoryDirectory(people(4));
    const sync = await open(directory, { target });
    const first = await sync.syncOnce();
    expect(first).toMatchObject({ completed: false, created: 3, refused: 1, failed: 1 });
    expect(first.stoppedAt).toBeUndefined();
    expect(first.refusals).toEqual([
      {
        message: { kind: "create", uuid: "u1", fields: expect.any(Array) },
        attempt: 1,
        status: 422,
        body: { error: "refused u1" },
        durationMs: expect.any(Number),
      },
    ]);
    expect((await app.store.list()).map(({ uuid }) => uuid)).toEqual(["u0", "u2", "u3"]);
    // Held: the next cycle sends it again (a 422 is not retried within the cycle).
    expect(
      app.received.filter(({ body }) => (body as { uuid?: string })?.uuid === "u1"),
    ).toHaveLength(0);
    const second = await sync.syncOnce();
    expect(second).toMatchObject({ completed: false, refused: 1 });
    expect(second.refusals[0]).toMatchObject({ attempt: 2, status: 422 });
    refusing = false;
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 1, unchanged: 3 });
    expect((await app.store.list()).sort(byUuid)).toEqual([...directory.users].sort(byUuid));
  });

  it("stops the cycle as before on a 5xx, 401, 403, 408 or 429", async () => {
    for (const status of [500, 401, 403, 408, 429]) {
      app = createReferenceProvisioning();
      const target = await uniqueUsernames({
        refuse: (body) => (body.uuid === "u1" ? status : undefined),
      });
      const sync = await open(memoryDirectory(people(3)), { target });
      const report = await sync.syncOnce();
      expect(report, `status ${status}`).toMatchObject({
        completed: false,
        created: 1,
        refused: 0,
      });
      expect(report.stoppedAt).toMatchObject({ status, message: { uuid: "u1" } });
      await sync.close();
      syncs.length = 0;
      rmSync(join(folder, "state.sqlite"), { force: true });
      rmSync(join(folder, "state.sqlite-acks"), { force: true });
    }
  });

  it("orders renames within a cycle: a username freed later in the directory's order is taken once free", async () => {
    const target = await uniqueUsernames();
    const directory = memoryDirectory(people(3));
    const sync = await open(directory, { target });
    await sync.syncOnce();
    // u0 takes user2's name; u2 (later in the order) becomes user9.
    (directory.users[0] as UserRecord).username = "user2";
    (directory.users[2] as UserRecord).username = "user9";
    app.received.length = 0;
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: true, modified: 2, refused: 0, failed: 0 });
    expect((await app.store.list()).sort(byUuid)).toEqual([...directory.users].sort(byUuid));
  });

  it("stages a username swap through a temporary name, which the application accepts", async () => {
    const target = await uniqueUsernames();
    const directory = memoryDirectory(people(4));
    const sync = await open(directory, { target });
    await sync.syncOnce();
    // A swap (u0, u1) and a rotation of three (u2 -> user3, u3 -> user2 is a swap too).
    const [u0, u1, u2, u3] = directory.users as [UserRecord, UserRecord, UserRecord, UserRecord];
    [u0.username, u1.username] = [u1.username as string, u0.username as string];
    [u2.username, u3.username] = [u3.username as string, u2.username as string];
    app.received.length = 0;
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: true, modified: 4, refused: 0 });
    expect((await app.store.list()).sort(byUuid)).toEqual([...directory.users].sort(byUuid));
    const renames = app.received
      .filter(({ path }) => path === "/v1/user/modify")
      .map(({ body }) => (body as { username: string }).username);
    expect(renames).toContain("sync-tmp-u1");
    // Nothing is left to send: the temporary name was replaced within the cycle.
    app.received.length = 0;
    expect(await sync.syncOnce()).toMatchObject({ completed: true, unchanged: 4 });
    expect(calls()).toEqual(["GET /v1/ping"]);
  });

  it("keeps the Content Sync cookie while a message is held, so the held change is read again", async () => {
    let refusing = true;
    const target = await uniqueUsernames({
      refuse: (body) => (refusing && body.uuid === "u8" ? 400 : undefined),
    });
    const { feed, sync } = await syncedWithFeed(2, { target });
    const [, , , , , , , u7, u8] = people(10) as UserRecord[];
    feed.next = { changed: [u7, u8] as UserRecord[], skipped: [], deleted: [], cookie: "c1" };
    expect(await sync.syncOnce()).toMatchObject({ completed: false, created: 1, refused: 1 });
    refusing = false;
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 1, unchanged: 3 });
    // The cycle that held u8 did not keep c1: the next asked from c0 again.
    expect(feed.asked).toEqual(["c0", "c0"]);
    await sync.syncOnce();
    expect(feed.asked).toEqual(["c0", "c0", "c1"]);
  });
});

describe("the delete guard", () => {
  type GuardOptions = Partial<
    Pick<
      SyncTargetOptions,
      "deleteGuard" | "allowDeletes" | "allowDeleteAll" | "resetRequest" | "now"
    >
  >;
  async function synced(count: number, options: GuardOptions & { state?: string } = {}) {
    appUrl ??= (await startServer((request) => app.fetch(request))).url;
    const directory = memoryDirectory(people(count));
    const { state, ...rest } = options;
    const sync = createDirectorySync({
      source: directory,
      target: appUrl,
      state: join(folder, state ?? "guard.sqlite"),
      ...rest,
    });
    syncs.push(sync);
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: count });
    app.received.length = 0;
    return { directory, sync };
  }
  /** The same state file and directory, opened again as a restart (or a new CLI run) would. */
  async function restart(directory: DirectorySource, options: GuardOptions = {}) {
    await Promise.all(syncs.splice(0).map((sync) => sync.close()));
    const sync = createDirectorySync({
      source: directory,
      target: appUrl as string,
      state: join(folder, "guard.sqlite"),
      ...options,
    });
    syncs.push(sync);
    return sync;
  }

  it("judges a reset before it is sent: an empty read sends no reset and deletes nothing", async () => {
    const { directory, sync } = await synced(100, { resetRequest: true });
    directory.users = [];
    sync.requestResync();
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ mode: "full", completed: false, deleted: 0 });
    expect(report.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(calls()).toEqual(["GET /v1/ping"]);
    expect(await app.store.list()).toHaveLength(100);
    // The re-sync is still asked for, and judged again.
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 100, held: 100 });
    expect(calls()).toEqual(["GET /v1/ping", "GET /v1/ping"]);
  });

  it("sends no reset from a state file that holds nobody, whatever the read, unless allowDeleteAll", async () => {
    appUrl ??= (await startServer((request) => app.fetch(request))).url;
    for (const user of people(60)) await app.store.upsert(user);
    // A new state file, as the StateMismatchError's advice once led to, and a read of 2 users.
    const directory = memoryDirectory(people(2));
    let sync = await restart(directory, { resetRequest: true });
    sync.requestResync();
    for (const users of [[], people(2)]) {
      directory.users = users;
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ mode: "full", completed: false, deleted: 0 });
      expect(report.deleteGuard?.message).toMatch(
        /state file holds no user .*does not know which users this application holds: POST \/v1\/reset would remove every one of them.*without --reset-request.*allowDeleteAll: true/,
      );
    }
    expect(calls()).toEqual(["GET /v1/ping", "GET /v1/ping"]);
    expect(await app.store.list()).toHaveLength(60);
    sync = await restart(directory, { resetRequest: true, allowDeleteAll: true });
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", completed: true, created: 2 });
    expect(calls()).toContain("POST /v1/reset");
    expect(await app.store.list()).toHaveLength(2);
  });

  it("judges a reset as blind from a state file taken over from another application", async () => {
    const { directory } = await synced(10, { resetRequest: true });
    const other = await startServer((request) => app.fetch(request));
    await Promise.all(syncs.splice(0).map((sync) => sync.close()));
    const sync = createDirectorySync({
      source: directory,
      target: other.url,
      state: join(folder, "guard.sqlite"),
      adoptState: true,
      resetRequest: true,
    });
    syncs.push(sync);
    sync.requestResync();
    expect((await sync.syncOnce()).deleteGuard?.message).toMatch(
      /taken over from another application .*No reset was sent/,
    );
    expect(calls()).toEqual(["GET /v1/ping"]);
  });

  /**
   * A directory whose read that creates leaves out some users the uuid read returns, as Active
   * Directory's disabled accounts kept by default ("keep") and its entries without a username are.
   */
  function keepingDirectory(count: number) {
    const directory = memoryDirectory(people(count));
    const kept = new Set<string>();
    const read = directory.read;
    directory.read = async function* (options) {
      for await (const page of read(options)) {
        if (options.uuidsOnly) yield page;
        else {
          yield {
            users: page.users.filter((user) => !kept.has(user.uuid)),
            skipped: page.users
              .filter((user) => kept.has(user.uuid))
              .map((user) => ({ dn: `cn=${user.uuid}`, reason: "it has no username" })),
          };
        }
      }
    };
    return { directory, kept };
  }

  it("judges a reset on the read that creates: users it leaves out count as deleted (AD's kept accounts, entries without a username)", async () => {
    appUrl ??= (await startServer((request) => app.fetch(request))).url;
    const { directory, kept } = keepingDirectory(100);
    let sync = await restart(directory, { resetRequest: true });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 100 });
    for (let index = 0; index < 40; index++) kept.add(`u${index}`);
    sync.requestResync();
    const stopped = await sync.syncOnce();
    expect(stopped).toMatchObject({
      deleted: 0,
      skipped: 40,
      deleteGuard: { deletes: 40, held: 100 },
    });
    expect(stopped.deleteGuard?.message).toMatch(
      /POST \/v1\/reset would remove 40 of the 100 users the application holds for good, as the read its creates come from does not return them \(the read skipped 40 entries: see skippedEntries for why\), more than 20 %: no reset was sent/,
    );
    expect(stopped.skippedEntries[0]).toEqual({ dn: "cn=u0", reason: "it has no username" });
    for (let index = 40; index < 100; index++) kept.add(`u${index}`);
    const report = await sync.syncOnce();
    expect(report.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(await app.store.list()).toHaveLength(100);
    kept.clear();
    for (let index = 0; index < 40; index++) kept.add(`u${index}`);
    sync = await restart(directory, { resetRequest: true, allowDeletes: 40 });
    expect(await sync.syncOnce()).toMatchObject({
      mode: "full",
      completed: true,
      deleted: 40,
      created: 60,
      allowed: 40,
    });
    expect(await app.store.list()).toHaveLength(60);
  });

  it("sends a reset and its creates from one read: a second read that returns fewer cannot remove users unjudged", async () => {
    const { directory, sync } = await synced(50, { resetRequest: true });
    // The first read of the cycle sees every user, any later one 10 (another replica, a change).
    const read = directory.read;
    let reads = 0;
    directory.read = (options) =>
      ++reads === 1 ? read(options) : memoryDirectory(people(10)).read(options);
    sync.requestResync();
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ mode: "full", completed: true, deleted: 0, created: 50 });
    expect(reads).toBe(1);
    expect(await app.store.list()).toHaveLength(50);
  });

  // Catches: one 503 in an allowed clean-up spending the allowance, every later cycle stopped on
  // the rest, and a report that says the allowance deleted what it only allowed.
  it("lets an allowance a failure interrupted cover the rest of the same users, and no other", async () => {
    let deletes = 0;
    let failAt = 5;
    appUrl = (
      await startServer(async (request) =>
        request.method === "DELETE" && ++deletes === failAt
          ? new Response(null, { status: 503 })
          : app.fetch(request),
      )
    ).url;
    const { directory } = await synced(100);
    directory.users.splice(0, 30);
    const sync = await restart(directory, { allowDeletes: 30 });
    expect(await sync.syncOnce()).toMatchObject({ completed: false, deleted: 4, allowed: 30 });
    // Another user gone too: not among the allowed, so the rest is judged afresh and stopped.
    const gone = directory.users.splice(0, 1);
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 27, held: 96 });
    directory.users.unshift(...gone);
    failAt = 0;
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 26, allowed: 26 });
    expect(await app.store.list()).toHaveLength(70);
    // Spent: the next mass delete is stopped.
    directory.users.splice(0, 30);
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 30, held: 70 });
  });

  it("keeps a full re-sync asked for when the guard stops it, without a reset too", async () => {
    const { directory, sync } = await synced(100);
    directory.users.splice(0, 30);
    sync.requestResync();
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 30, held: 100 });
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", completed: false });
    directory.users = people(100);
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", completed: true, created: 100 });
    expect((await sync.syncOnce()).mode).toBe("update");
  });

  it("records a reset before it is sent: a reset never acknowledged is named in the next stop", async () => {
    appUrl ??= (await startServer((request) => app.fetch(request))).url;
    let faults: FaultyClient | undefined;
    const directory = memoryDirectory(people(100));
    let sync = createDirectorySync({
      source: directory,
      target: appUrl,
      state: join(folder, "guard.sqlite"),
      resetRequest: true,
      wrapClient: (client) => (faults = withFaults(client)),
    });
    syncs.push(sync);
    await sync.syncOnce();
    faults?.injectFault({ type: "drop-response", on: "reset" });
    sync.requestResync();
    expect((await sync.syncOnce()).stoppedAt?.message.kind).toBe("reset");
    expect(await app.store.list()).toHaveLength(0);
    directory.users.splice(0, 30);
    sync = await restart(directory, { resetRequest: true });
    const report = await sync.syncOnce();
    expect(report.deleteGuard?.message).toMatch(
      /30 of the 100 users .*reset \(POST \/v1\/reset\) sent earlier was never acknowledged/,
    );
    sync = await restart(directory, { resetRequest: true, allowDeletes: 30 });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 70, deleted: 30 });
    directory.users.splice(0, 30);
    expect((await sync.syncOnce()).deleteGuard?.message).not.toMatch(/never acknowledged/);
  });

  it("refuses thresholds and allowances that are not numbers of 0 or more", () => {
    const source = memoryDirectory([]);
    const state = join(folder, "refused.sqlite");
    for (const options of [
      { deleteGuard: { windowMs: Number.NaN } },
      { deleteGuard: { maxDeletes: -1 } },
      { allowDeletes: "5" as unknown as number },
    ]) {
      expect(() =>
        createDirectorySync({ source, target: "http://127.0.0.1:1", state, ...options }),
      ).toThrow(/must be a number of 0 or more/);
    }
  });

  it("counts what a reset removed as deleted, and lets it through once allowed", async () => {
    const { directory } = await synced(100, { resetRequest: true });
    directory.users.splice(0, 30);
    let sync = await restart(directory, { resetRequest: true });
    sync.requestResync();
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 30, held: 100 });
    expect(calls()).toEqual(["GET /v1/ping"]);
    sync = await restart(directory, { resetRequest: true, allowDeletes: 30 });
    const report = await sync.syncOnce();
    expect(report).toMatchObject({
      mode: "full",
      completed: true,
      deleted: 30,
      created: 70,
      allowed: 30,
    });
    expect(calls()).toContain("POST /v1/reset");
    expect(await app.store.list()).toHaveLength(70);
  });

  it("spends an allowance on the one cycle it covers: a later empty read is stopped", async () => {
    const { directory } = await synced(130);
    directory.users.splice(30);
    const sync = await restart(directory, { allowDeletes: 100 });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 100, allowed: 100 });
    directory.users = [];
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: false, deleted: 0 });
    expect(report.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(await app.store.list()).toHaveLength(30);
  });

  it("spends an allowance that does not cover the cycle the guard stops, and says so", async () => {
    const { directory } = await synced(100);
    directory.users.splice(0, 40);
    const sync = await restart(directory, { allowDeletes: 30 });
    expect((await sync.syncOnce()).deleteGuard?.message).toMatch(
      /allowDeletes: 30\) did not cover this cycle and is spent/,
    );
    directory.users = people(100).slice(30);
    // 30 deletes now, within the 30 once allowed: still stopped, as the allowance is spent.
    expect((await sync.syncOnce()).deleteGuard).toBeDefined();
    expect(await app.store.list()).toHaveLength(100);
  });

  it("never deletes every user on a count, only with allowDeleteAll, once", async () => {
    const { directory } = await synced(30);
    directory.users = [];
    let sync = await restart(directory, { allowDeletes: 1000 });
    expect((await sync.syncOnce()).deleteGuard?.message).toMatch(/no count allows it/);
    sync = await restart(directory, { allowDeleteAll: true });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 30, allowed: 30 });
    expect(await app.store.list()).toHaveLength(0);
  });

  it("counts deletes over a rolling window: 19 a cycle is stopped where 38 at once is", async () => {
    const { directory, sync } = await synced(100);
    directory.users.splice(0, 19);
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 19 });
    directory.users.splice(0, 19);
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: false, deleted: 0 });
    expect(report.deleteGuard).toMatchObject({ deletes: 19, held: 81, windowDeletes: 19 });
    expect(report.deleteGuard?.message).toMatch(/after 19 deleted in the last 24 h: 38 of the 100/);
    expect(await app.store.list()).toHaveLength(81);
  });

  it("keeps the window across restarts, and lets it age out", async () => {
    let clock = Date.UTC(2026, 0, 1);
    const now = () => clock;
    const { directory } = await synced(100, { now });
    for (let cycle = 0; cycle < 5; cycle++) {
      directory.users.splice(0, 19);
      const sync = await restart(directory, { now });
      const report = await sync.syncOnce();
      if (cycle === 0) expect(report).toMatchObject({ completed: true, deleted: 19 });
      else expect(report).toMatchObject({ completed: false, deleted: 0 });
      directory.users = people(100).slice(19);
    }
    expect(await app.store.list()).toHaveLength(81);
    clock += 24 * 60 * 60_000;
    directory.users.splice(0, 19);
    expect(await (await restart(directory, { now })).syncOnce()).toMatchObject({
      completed: true,
      deleted: 19,
    });
  });

  it("releases the window with an allowance: its deletes are accepted with the cycle's", async () => {
    const { directory, sync } = await synced(100);
    directory.users.splice(0, 19);
    await sync.syncOnce();
    directory.users.splice(0, 19);
    expect((await sync.syncOnce()).deleteGuard).toBeDefined();
    const allowed = await restart(directory, { allowDeletes: 19 });
    expect(await allowed.syncOnce()).toMatchObject({ deleted: 19, allowed: 19 });
    directory.users.splice(0, 5);
    expect(await allowed.syncOnce()).toMatchObject({ completed: true, deleted: 5 });
  });

  it("sends nothing when a cycle would delete more than 20 % (from 20 deletes), and says how to allow it", async () => {
    const { directory, sync } = await synced(100);
    directory.users.splice(0, 21);
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: false, deleted: 0, failed: 1 });
    expect(report.deleteGuard).toEqual({
      deletes: 21,
      held: 100,
      message: expect.stringMatching(
        /would delete 21 of the 100 users .*more than 20 %.*allowDeletes: 21 \(sync --allow-deletes 21\)/,
      ),
    });
    expect(calls()).toEqual(["GET /v1/ping"]);
    expect(await app.store.list()).toHaveLength(100);
  });

  it("lets 20 % through, and fewer than 20 deletes whatever their share", async () => {
    const { directory, sync } = await synced(100);
    directory.users.splice(0, 20);
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 20 });
    app = createReferenceProvisioning();
    appUrl = undefined;
    const small = await synced(30, { state: "small.sqlite" });
    small.directory.users.splice(0, 19);
    // 19 of 30 is 63 %, but fewer than 20 deletes.
    expect(await small.sync.syncOnce()).toMatchObject({ completed: true, deleted: 19 });
  });

  it("takes its thresholds as options, and the operator's allowance", async () => {
    const { directory, sync } = await synced(10, { deleteGuard: { maxDeletes: 2 } });
    directory.users.splice(0, 3);
    expect((await sync.syncOnce()).deleteGuard?.message).toMatch(/more than 2:/);
    await sync.close();
    syncs.length = 0;
    const allowed = createDirectorySync({
      source: directory,
      target: appUrl as string,
      state: join(folder, "guard.sqlite"),
      deleteGuard: { maxDeletes: 2 },
      allowDeletes: 3,
    });
    syncs.push(allowed);
    expect(await allowed.syncOnce()).toMatchObject({ completed: true, deleted: 3 });
  });

  it("guards Content Sync deletes too, and lets everything through when turned off", async () => {
    const { feed, sync } = await syncedWithFeed(4);
    feed.next = { changed: [], skipped: [], deleted: ["u0", "u1", "u2", "u3"], cookie: "c1" };
    expect((await sync.syncOnce()).deleteGuard).toMatchObject({ deletes: 4, held: 4 });
    expect(calls()).toEqual(["GET /v1/ping"]);
    await sync.close();
    syncs.length = 0;
    const off = createDirectorySync({
      source: Object.assign(memoryDirectory([]), { changes: feed }),
      target: appUrl as string,
      state: join(folder, "state.sqlite"),
      deleteGuard: false,
    });
    syncs.push(off);
    expect(await off.syncOnce()).toMatchObject({ completed: true, deleted: 4 });
  });
});

describe("the state file", () => {
  it("tells a failure of its own files as such, with the path and the fix, never as the directory's", async () => {
    const state = join(folder, "state.sqlite");
    // The password-digest key's place taken by a folder: every cycle failed as a directoryError.
    mkdirSync(`${state}-key`);
    const sync = await open(memoryDirectory([{ uuid: "p1", username: "pat", password: "pw" }]));
    const failure = sync.syncOnce();
    await expect(failure).rejects.toBeInstanceOf(StateFileError);
    await expect(failure).rejects.toMatchObject({
      path: `${state}-key`,
      message: expect.stringMatching(
        /password-digest key file .*state\.sqlite-key failed \(EISDIR.*move away what is there.*not the directory's/,
      ),
    });
    await sync.close();
    syncs.length = 0;
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(`${state}-acks`, { recursive: true });
    await expect(open(memoryDirectory([]))).rejects.toMatchObject({
      name: "StateFileError",
      path: `${state}-acks`,
      message: expect.stringMatching(/journal of acknowledgements .*state\.sqlite-acks failed/),
    });
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(state, { recursive: true });
    await expect(open(memoryDirectory([]))).rejects.toMatchObject({
      name: "StateFileError",
      path: state,
      message: expect.stringMatching(/state file .*state\.sqlite failed .*move it away/),
    });
  });

  it("keeps passwords as an HMAC under a key kept in another file, and rewrites an older SHA-256 digest without a message", async () => {
    const { createHash } = await import("node:crypto");
    const { DatabaseSync } = await import("node:sqlite");
    const directory = memoryDirectory([
      { uuid: "p1", username: "pat", password: "correct horse", passwordFormat: "plain" },
    ]);
    const sync = await open(directory);
    await sync.syncOnce();
    await sync.close();
    syncs.length = 0;
    const state = join(folder, "state.sqlite");
    const unsalted = createHash("sha256").update("correct horse").digest("hex");
    const stored = () => {
      const db = new DatabaseSync(state);
      const row = db.prepare("SELECT record FROM acknowledged").get() as { record: string };
      db.close();
      return JSON.parse(row.record).password as string;
    };
    expect(readFileSync(state).includes(unsalted)).toBe(false);
    expect(stored()).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(stored()).not.toContain(unsalted);
    expect(readFileSync(`${state}-key`, "utf8")).toMatch(/^[A-Za-z0-9+/=]{44}\n$/);
    // A state file an earlier version wrote: the unsalted digest.
    const db = new DatabaseSync(state);
    db.prepare("UPDATE acknowledged SET record = ?").run(
      JSON.stringify({
        uuid: "p1",
        username: "pat",
        password: `sha256:${unsalted}`,
        password_format: "plain",
      }),
    );
    db.close();
    const reopened = await open(directory);
    app.received.length = 0;
    expect(await reopened.syncOnce()).toMatchObject({ completed: true, unchanged: 1 });
    expect(calls()).toEqual(["GET /v1/ping"]);
    await reopened.close();
    syncs.length = 0;
    expect(stored()).toMatch(/^hmac-sha256:/);
  });

  it("binds to its directory only once it holds something: a first run that reached nothing is not bound", async () => {
    const target = "http://127.0.0.1:1";
    const failing = await open(memoryDirectory(people(1), "ldap://mistyped:389 ou=people"), {
      target,
    });
    expect(await failing.syncOnce()).toMatchObject({ completed: false });
    await failing.close();
    syncs.length = 0;
    const right = await open(memoryDirectory(people(1), "ldap://right:389 ou=people"));
    expect(await right.syncOnce()).toMatchObject({ completed: true, created: 1 });
    await right.close();
    syncs.length = 0;
    // Now it holds a user: another directory is refused.
    await expect(open(memoryDirectory(people(1), "ldap://other:389 ou=people"))).rejects.toThrow(
      StateMismatchError,
    );
  });

  it("takes over a state file whose identity carried the filter (a filter change needs no re-sync)", async () => {
    const { DatabaseSync } = await import("node:sqlite");
    const sync = await open(memoryDirectory(people(1), "ldap://h:389 ou=people"));
    await sync.syncOnce();
    await sync.close();
    syncs.length = 0;
    const db = new DatabaseSync(join(folder, "state.sqlite"));
    db.prepare("UPDATE meta SET value = ? WHERE key = 'source'").run(
      "ldap://h:389 ou=people (objectClass=person)",
    );
    db.close();
    const again = await open(memoryDirectory(people(1), "ldap://h:389 ou=people"));
    expect(await again.syncOnce()).toMatchObject({ completed: true, unchanged: 1 });
  });
});
