// The directory sync against a real OpenLDAP slapd: the one at PLATFORM_INTEGRATION_LDAP_URL,
// which .ci/steps/slapd.sh starts with a generated directory (test/support/slapd.ts). Without it
// the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_LDAP=1 says it must run.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDirectorySync,
  type DirectorySync,
  type SyncTargetOptions,
} from "../../src/ldap/index.ts";
import { toWireUser } from "../../src/platform/wire-user.ts";
import {
  createProvisioningHandler,
  type UserRecord,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import {
  type Person,
  peopleDn,
  person,
  personAttributes,
  recordedAdUser,
  suffix,
} from "../support/directory-fixture.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";
import { type Syncprov, startSlapd } from "../support/slapd.ts";

const url = process.env.PLATFORM_INTEGRATION_LDAP_URL;
const bindDn = process.env.PLATFORM_INTEGRATION_LDAP_BIND_DN ?? "";
const password = process.env.PLATFORM_INTEGRATION_LDAP_PASSWORD ?? "";
const peopleCount = Number(process.env.PLATFORM_INTEGRATION_LDAP_PEOPLE ?? 0);
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_LDAP === "1";
const cli = new URL("../../src/cli/index.ts", import.meta.url).pathname;

/** What the mapping must make of a generated person: the fixture, not the sync, says it. */
function expectedUser(someone: Person, { passwords = false } = {}): UserRecord {
  const scheme = /^\{([^}]+)\}/.exec(someone.userPassword ?? "");
  return {
    uuid: someone.entryUUID,
    userId: someone.employeeNumber,
    username: someone.uid[0] as string,
    firstName: someone.givenName,
    lastName: someone.sn,
    fullName: someone.displayName ?? (someone.cn[0] as string),
    ...(someone.mail[0] !== undefined && { email: someone.mail[0] }),
    ...(passwords &&
      someone.userPassword !== undefined && {
        password: scheme ? someone.userPassword.slice(scheme[0].length) : someone.userPassword,
        passwordFormat: scheme ? (scheme[1] as string) : "plain",
      }),
  };
}

const byUuid = (a: UserRecord, b: UserRecord) => a.uuid.localeCompare(b.uuid);

/** The scenarios that read the directory run with either reader: same messages, same errors. */
const readers = [
  { reader: "the delivery thread", readInWorker: false },
  { reader: "a worker thread (readInWorker)", readInWorker: true },
];

describe.runIf(url || required)("directory sync against a real slapd", () => {
  if (!url) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_LDAP=1, but PLATFORM_INTEGRATION_LDAP_URL is unset",
      );
    });
    return;
  }
  const ldap = { url, bindDn, password };
  let folder: string;
  let admin: Client;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "ldap-suite-"));
    admin = new Client({ url });
    await admin.bind(bindDn, password);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await admin.unbind();
    rmSync(folder, { recursive: true, force: true });
  });

  /** The application: the SDK's handler over a SQLite store, on a real port. */
  async function startApp(
    store: UserStore = track(
      new SqliteUserStore(join(folder, `app-${randomUUID()}.db`), { synchronous: "normal" }),
    ),
    intercept?: (request: { method: string; path: string }) => number | undefined,
  ) {
    // POST /v1/reset served, as a release with identity.enable_reset_request has it.
    const handler = createProvisioningHandler({ store, reset: true });
    const received: { method: string; path: string; body?: Record<string, unknown> }[] = [];
    const server = await serveFetchHandler(async (request) => {
      const path = new URL(request.url).pathname;
      const refused = intercept?.({ method: request.method, path });
      if (refused !== undefined) return new Response(null, { status: refused });
      const text = request.method === "POST" ? await request.clone().text() : "";
      received.push({ method: request.method, path, ...(text && { body: JSON.parse(text) }) });
      return handler.fetch(request);
    });
    cleanups.push(() => server.close());
    return { url: server.url, store, received };
  }

  function track<T extends { close(): void }>(store: T): T {
    cleanups.push(() => store.close());
    return store;
  }

  function openSync(
    options: {
      target: string;
      baseDn: string;
      passwords?: boolean;
      usernameField?: string;
      filter?: string;
      ldap?: { url: string; bindDn: string; password: string };
      state?: string;
      readInWorker?: boolean;
    } & Pick<SyncTargetOptions, "resetRequest" | "deleteGuard" | "allowDeletes" | "allowDeleteAll">,
  ): DirectorySync {
    const sync = createDirectorySync({
      ldap,
      state: join(folder, `state-${randomUUID()}.sqlite`),
      mapping: { userId: "employeeNumber" },
      ...options,
    });
    cleanups.push(() => sync.close());
    return sync;
  }

  /** A fresh organizational unit of `count` generated people, removed after the test. */
  async function createUnit(count: number): Promise<{ dn: string; people: Person[] }> {
    const dn = `ou=unit-${randomUUID().slice(0, 8)},${suffix}`;
    await admin.add(dn, {
      objectClass: ["organizationalUnit"],
      ou: [dn.slice(3, dn.indexOf(","))],
    });
    const people: Person[] = [];
    for (let index = 0; index < count; index++) {
      const someone = person(index, dn);
      await admin.add(someone.dn, personAttributes(someone));
      people.push(someone);
    }
    cleanups.push(async () => {
      const { searchEntries } = await admin.search(dn, { scope: "one", attributes: ["1.1"] });
      for (const { dn: child } of searchEntries) await admin.del(child);
      await admin.del(dn);
    });
    return { dn, people: await readBack(dn) };
  }

  /** The people of a unit as slapd holds them now (its entryUUIDs are its own). */
  async function readBack(base: string): Promise<Person[]> {
    const { searchEntries } = await admin.search(base, {
      filter: "(objectClass=inetOrgPerson)",
      attributes: ["*", "entryUUID"],
    });
    return searchEntries.map(toPerson);
  }

  function toPerson(entry: Record<string, unknown> & { dn: string }): Person {
    const list = (value: unknown) =>
      value === undefined ? [] : Array.isArray(value) ? (value as string[]) : [value as string];
    return {
      dn: entry.dn,
      entryUUID: entry.entryUUID as string,
      uid: list(entry.uid),
      givenName: entry.givenName as string,
      sn: entry.sn as string,
      cn: list(entry.cn),
      ...(entry.displayName !== undefined && { displayName: entry.displayName as string }),
      mail: list(entry.mail),
      employeeNumber: entry.employeeNumber as string,
      ...(entry.userPassword !== undefined && { userPassword: entry.userPassword as string }),
    };
  }

  /** The people of `base` on another server, as it holds them now. */
  async function readBackFrom(client: Client, base: string): Promise<Person[]> {
    const { searchEntries } = await client.search(base, {
      filter: "(objectClass=inetOrgPerson)",
      attributes: ["*", "entryUUID"],
    });
    return searchEntries.map(toPerson);
  }

  /** Replaces the Content Sync cookie a closed state file keeps. */
  function rewriteCookie(state: string, cookie: string) {
    const db = new DatabaseSync(state);
    const row = db.prepare("SELECT value FROM meta WHERE key = 'changeCookie'").get() as {
      value: string;
    };
    const kept = JSON.parse(row.value);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'changeCookie'").run(
      JSON.stringify({ ...kept, cookie: Buffer.from(cookie).toString("base64") }),
    );
    db.close();
  }

  /** Runs `platform-integration sync --once` from the sources in a process of its own. */
  function spawnSync(target: string, baseDn: string, extra: string[]) {
    const passwordFile = join(folder, `bind-password-${randomUUID()}`);
    // A trailing newline, as `echo secret > file` leaves one: the CLI ignores it.
    writeFileSync(passwordFile, `${password}\n`);
    const child = spawn(
      process.execPath,
      [
        "--disable-warning=ExperimentalWarning",
        cli,
        "sync",
        target,
        ...["--ldap-url", url as string, "--bind-dn", bindDn, "--bind-password-file", passwordFile],
        ...["--base-dn", baseDn, "--once", ...extra],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    const exit = once(child, "exit").then(([code, signal]) => ({ code, signal, out }));
    return { child, exit };
  }

  it.each(readers)(
    `syncs the generated directory (${peopleCount} people) into a SQLite store, field by field, read in $reader`,
    async ({ readInWorker }) => {
      const app = await startApp();
      const sync = openSync({ target: app.url, baseDn: peopleDn, passwords: true, readInWorker });
      const report = await sync.syncOnce();
      expect(report).toMatchObject({
        completed: true,
        mode: "initial",
        created: peopleCount,
        failed: 0,
      });
      const expected = Array.from({ length: peopleCount }, (_, index) =>
        expectedUser(person(index), { passwords: true }),
      );
      const stored = await (app.store as SqliteUserStore).list();
      expect(stored.sort(byUuid)).toEqual(expected.sort(byUuid));
      // What the fixture holds: non-ASCII names, users without mail, a second mail and uid.
      expect(stored.some((user) => user.lastName === "Ångström")).toBe(true);
      expect(stored.filter((user) => user.email === undefined).length).toBeGreaterThan(
        peopleCount / 10,
      );
      expect(stored.find((user) => user.username === "user5")).toBeDefined();

      const again = await sync.syncOnce();
      expect(again).toMatchObject({ completed: true, mode: "update", unchanged: peopleCount });
    },
    600_000,
  );

  // The delete guard on a real directory, as an operator meets it: a filter that matches nothing
  // with a full re-sync and POST /v1/reset (the reset used to go first), deletes spread over
  // cycles (each under the threshold), and an allowance that outlived its clean-up.
  it("guards a reset after a filter change, deletes spread over cycles, and spends an allowance once", async () => {
    const unit = await createUnit(50);
    const app = await startApp();
    const state = join(folder, `guard-${randomUUID()}.sqlite`);
    const guard = { deleteGuard: { maxDeletes: 15 } };
    let sync = openSync({ target: app.url, baseDn: unit.dn, state, ...guard });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 50 });
    await sync.close();

    // A filter that matches nothing, with a full re-sync and a reset: nothing is sent.
    const filter = "(&(objectClass=inetOrgPerson)(employeeNumber=no-such-number))";
    sync = openSync({ target: app.url, baseDn: unit.dn, state, filter, resetRequest: true });
    sync.requestResync();
    app.received.length = 0;
    const stopped = await sync.syncOnce();
    expect(stopped).toMatchObject({ mode: "full", completed: false, deleted: 0 });
    expect(stopped.deleteGuard?.message).toMatch(/refusing to delete them all/);
    expect(app.received.map(({ method, path }) => `${method} ${path}`)).toEqual(["GET /v1/ping"]);
    expect(await (app.store as SqliteUserStore).list()).toHaveLength(50);
    await sync.close();

    // The filter fixed: the re-sync still asked for runs, and its reset removes nobody.
    sync = openSync({ target: app.url, baseDn: unit.dn, state, resetRequest: true, ...guard });
    expect(await sync.syncOnce()).toMatchObject({ mode: "full", completed: true, deleted: 0 });
    // 10 entries deleted in slapd, then 10 more: the second cycle is stopped by the window.
    for (const someone of unit.people.slice(0, 10)) await admin.del(someone.dn);
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 10 });
    for (const someone of unit.people.slice(10, 20)) await admin.del(someone.dn);
    const spread = await sync.syncOnce();
    expect(spread.deleteGuard).toMatchObject({ deletes: 10, held: 40, windowDeletes: 10 });
    expect(spread.deleteGuard?.message).toMatch(/after 10 deleted in the last 24 h: 20 of the 50/);
    expect(await (app.store as SqliteUserStore).list()).toHaveLength(40);
    await sync.close();

    // Allowed once: the cycle goes through; a later empty directory is stopped all the same.
    sync = openSync({ target: app.url, baseDn: unit.dn, state, allowDeletes: 40, ...guard });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 10, allowed: 10 });
    for (const someone of unit.people.slice(20)) await admin.del(someone.dn);
    const empty = await sync.syncOnce();
    expect(empty).toMatchObject({ completed: false, deleted: 0 });
    expect(empty.deleteGuard).toMatchObject({ deletes: 30, held: 30 });
    expect(await (app.store as SqliteUserStore).list()).toHaveLength(30);
  });

  it("sends changes, renames and deletes made in slapd, then agrees with it again", async () => {
    const unit = await createUnit(40);
    const app = await startApp();
    const sync = openSync({ target: app.url, baseDn: unit.dn });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 40 });
    // The initial sync takes no Content Sync cookie; the first update cycle reads all and takes one.
    expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full", unchanged: 40 });
    const [changed, renamed, gone, noMail] = [1, 4, 6, 8].map((index) => unit.people[index]) as [
      Person,
      Person,
      Person,
      Person,
    ];
    const { Change, Attribute } = await import("ldapts");
    await admin.modify(changed.dn, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "givenName", values: ["Renée"] }),
      }),
    ]);
    await admin.modify(noMail.dn, [
      new Change({ operation: "delete", modification: new Attribute({ type: "mail" }) }),
    ]);
    // A rename: the entry's RDN and its uid change; its entryUUID does not.
    await admin.modifyDN(renamed.dn, `uid=renamed-4`);
    await admin.modify(`uid=renamed-4,${unit.dn}`, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "uid", values: ["renamed-4"] }),
      }),
    ]);
    await admin.del(gone.dn);
    const newcomer = person(99, unit.dn);
    await admin.add(newcomer.dn, personAttributes(newcomer));
    app.received.length = 0;

    const report = await sync.syncOnce();
    // slapd runs syncprov: the cycle read only what changed, its present phase told the delete.
    expect(report).toMatchObject({
      completed: true,
      read: "content-sync",
      created: 1,
      modified: 3,
      deleted: 1,
      unchanged: 36,
    });
    const messages = app.received.slice(1);
    expect(messages).toHaveLength(5);
    expect(messages[0]).toEqual({ method: "DELETE", path: `/v1/user/${gone.entryUUID}` });
    expect(messages.filter(({ path }) => path === "/v1/user/create")).toEqual([
      expect.objectContaining({ body: expect.objectContaining({ username: "user99" }) }),
    ]);
    const modifies = messages.filter(({ path }) => path === "/v1/user/modify");
    expect(modifies.map(({ body }) => body)).toEqual(
      expect.arrayContaining([
        { uuid: changed.entryUUID, first_name: "Renée" },
        { uuid: renamed.entryUUID, username: "renamed-4" },
        { uuid: noMail.entryUUID, email: null },
      ]),
    );
    const now = await readBack(unit.dn);
    expect((await (app.store as SqliteUserStore).list()).sort(byUuid)).toEqual(
      now.map((someone) => expectedUser(someone)).sort(byUuid),
    );
    expect((await (app.store as SqliteUserStore).get(renamed.entryUUID))?.username).toBe(
      "renamed-4",
    );
  }, 120_000);

  it.each(readers)(
    "loses nothing and keeps the order when the application answers 503 for a while, read in $reader",
    async ({ readInWorker }) => {
      const unit = await createUnit(60);
      let creates = 0;
      // Creates 20 to 34 meet a 503: the application is restarting mid-sync.
      const app = await startApp(undefined, ({ path }) => {
        if (path !== "/v1/user/create") return undefined;
        creates++;
        return creates >= 20 && creates < 35 ? 503 : undefined;
      });
      const sync = openSync({ target: app.url, baseDn: unit.dn, readInWorker });
      const reports = [];
      for (let cycle = 0; cycle < 20; cycle++) {
        const report = await sync.syncOnce();
        reports.push(report);
        if (report.completed) break;
      }
      expect(reports.at(-1)?.completed).toBe(true);
      expect(reports[0]?.stoppedAt).toMatchObject({ status: 503, message: { kind: "create" } });
      // Every stopped cycle stopped at the same message, the 20th user.
      const stops = new Set(reports.slice(0, -1).map((report) => report.stoppedAt?.message.uuid));
      expect(stops.size).toBe(1);
      const accepted = app.received
        .filter(({ path }) => path === "/v1/user/create")
        .map(({ body }) => body?.uuid);
      expect(accepted).toEqual(unit.people.map((someone) => someone.entryUUID));
      expect(await (app.store as SqliteUserStore).count()).toBe(60);
    },
    120_000,
  );

  it("converges after SIGKILL mid-cycle, redelivering at most the message in flight", async () => {
    const unit = await createUnit(80);
    const state = join(folder, "killed.sqlite");
    let child: ChildProcess | undefined;
    let creates = 0;
    const app = await startApp(undefined, ({ path }) => {
      // The 30th create reaches the application, which stores it; the sync dies before the answer.
      if (path === "/v1/user/create" && ++creates === 30) child?.kill("SIGKILL");
      return undefined;
    });
    const runSync = () => {
      const run = spawnSync(app.url, unit.dn, ["--state", state, "--json"]);
      child = run.child;
      return run.exit;
    };
    const killed = await runSync();
    expect(killed.signal).toBe("SIGKILL");
    const resumed = await runSync();
    expect(resumed.code).toBe(0);
    const report = JSON.parse(resumed.out);
    expect(report).toMatchObject({ completed: true, mode: "update" });
    // The 30th user was stored but not acknowledged: the one message sent again.
    expect(report.created).toBe(51);
    const accepted = app.received
      .filter(({ path }) => path === "/v1/user/create")
      .map(({ body }) => body?.uuid);
    const order = unit.people.map((someone) => someone.entryUUID);
    expect(accepted).toEqual([...order.slice(0, 30), ...order.slice(29)]);
    expect(await (app.store as SqliteUserStore).count()).toBe(80);
  }, 120_000);

  it("maps a recorded Active Directory entry: objectGUID in AD's byte order, sAMAccountName", async () => {
    const app = await startApp();
    const sync = openSync({
      target: app.url,
      baseDn: `ou=ad,${suffix}`,
      usernameField: "sAMAccountName",
      filter: "(sAMAccountName=*)",
    });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 1 });
    expect(await (app.store as SqliteUserStore).list()).toEqual([recordedAdUser]);
  });

  it.each(readers)(
    "stops at once, with its fix and without the password, when the bind is refused, read in $reader",
    async ({ readInWorker }) => {
      const app = await startApp();
      const secret = "wrong-secret-value";
      const sync = createDirectorySync({
        ldap: { url, bindDn, password: secret },
        baseDn: peopleDn,
        target: app.url,
        state: join(folder, `state-${randomUUID()}.sqlite`),
        readInWorker,
      });
      cleanups.push(() => sync.close());
      const failure = await sync.syncOnce().catch((error: Error) => error);
      expect(failure).toMatchObject({ name: "DirectoryError", fatal: true });
      expect((failure as Error).message).toMatch(/bind DN or its password was refused/);
      expect((failure as Error).message).not.toContain(secret);
      expect(app.received).toEqual([{ method: "GET", path: "/v1/ping" }]);
    },
  );

  it.each(readers)(
    "says which base DN or filter is wrong, and reports an unreachable server as retryable, read in $reader",
    async ({ readInWorker }) => {
      const app = await startApp();
      const missing = openSync({ target: app.url, baseDn: `ou=nowhere,${suffix}`, readInWorker });
      await expect(missing.syncOnce()).rejects.toMatchObject({
        fatal: true,
        message: expect.stringMatching(/base DN does not exist/),
      });
      const badFilter = openSync({
        target: app.url,
        baseDn: peopleDn,
        filter: "(uid=a",
        readInWorker,
      });
      await expect(badFilter.syncOnce()).rejects.toThrow(/The filter \(uid=a is invalid/);
      const unreachable = createDirectorySync({
        ldap: { url: "ldap://127.0.0.1:1", bindDn, password },
        baseDn: peopleDn,
        target: app.url,
        state: join(folder, `state-${randomUUID()}.sqlite`),
        readInWorker,
      });
      cleanups.push(() => unreachable.close());
      const report = await unreachable.syncOnce();
      expect(report).toMatchObject({ completed: false, failed: 1 });
      expect(report.directoryError).toMatch(/ECONNREFUSED/);
    },
  );

  it("sync --read-user reads every user back and reports each difference", async () => {
    const unit = await createUnit(5);
    const store = track(new SqliteUserStore(":memory:"));
    const app = await startApp(store);
    const reader = createServer(async (request, response) => {
      const uuid = decodeURIComponent((request.url as string).slice("/users/".length));
      const user = await store.get(uuid);
      // The application keeps its own spelling of one user's name: a difference to report.
      if (user && uuid === unit.people[2]?.entryUUID) user.firstName = "Someone Else";
      response.writeHead(user ? 200 : 404, { "content-type": "application/json" });
      // The read route's contract: the stored user in the wire's snake_case names.
      response.end(user ? JSON.stringify(toWireUser(user)) : "");
    });
    await new Promise<void>((resolve) => reader.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => reader.close(resolve)));
    const readUrl = `http://127.0.0.1:${(reader.address() as AddressInfo).port}/users/{uuid}`;
    const state = join(folder, "read-user.sqlite");
    const { code, out } = await spawnSync(app.url, unit.dn, [
      "--state",
      state,
      "--read-user",
      readUrl,
    ]).exit;
    expect(out).toContain("initial sync completed");
    expect(out).toContain("5 created, 0 modified, 0 deleted, 0 unchanged, 0 failed");
    // Long lines wrap at 80 columns.
    expect(out.replaceAll(/\s+/g, " ")).toContain(
      `Verification failed: 1 difference in the 5 users read back: ${unit.people[2]?.entryUUID}: first_name: expected "${unit.people[2]?.givenName}", found "Someone Else" `,
    );
    expect(out).not.toContain(password);
    expect(code).toBe(1);
  });

  it("resends the same message after a 503 in a Content Sync cycle, keeping its cookie until all are acknowledged", async () => {
    const unit = await createUnit(10);
    let armed = false;
    let modifyCalls = 0;
    // Once armed, the second and third modifies meet a 503: the application is restarting.
    const app = await startApp(undefined, ({ path }) => {
      if (!armed || path !== "/v1/user/modify") return undefined;
      modifyCalls++;
      return modifyCalls === 2 || modifyCalls === 3 ? 503 : undefined;
    });
    const sync = openSync({ target: app.url, baseDn: unit.dn });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full", created: 10 });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full", unchanged: 10 });
    const { Change, Attribute } = await import("ldapts");
    const [first, second] = unit.people as [Person, Person];
    for (const [someone, name] of [
      [first, "Première"],
      [second, "Seconde"],
    ] as const) {
      await admin.modify(someone.dn, [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "givenName", values: [name] }),
        }),
      ]);
    }
    app.received.length = 0;
    armed = true;
    const reports = [await sync.syncOnce(), await sync.syncOnce(), await sync.syncOnce()];
    expect(reports.map(({ completed, read }) => [completed, read])).toEqual([
      [false, "content-sync"],
      [false, "content-sync"],
      [true, "content-sync"],
    ]);
    expect(reports[0]?.stoppedAt).toMatchObject({ status: 503, message: { kind: "modify" } });
    expect(reports[1]?.stoppedAt?.message).toEqual(reports[0]?.stoppedAt?.message);
    const modifies = app.received.filter(({ path }) => path === "/v1/user/modify");
    // Each acknowledged once: the one acknowledged before the 503s is not sent again.
    expect(modifies.map(({ body }) => body)).toEqual([
      { uuid: first.entryUUID, first_name: "Première" },
      { uuid: second.entryUUID, first_name: "Seconde" },
    ]);
    expect((await (app.store as SqliteUserStore).list()).sort(byUuid)).toEqual(
      (await readBack(unit.dn)).map((someone) => expectedUser(someone)).sort(byUuid),
    );
    app.received.length = 0;
    expect(await sync.syncOnce()).toMatchObject({ read: "content-sync", unchanged: 10 });
    expect(app.received).toEqual([{ method: "GET", path: "/v1/ping" }]);
  }, 120_000);

  it("sync --no-content-sync reads the whole directory every cycle; the text says which read ran", async () => {
    const unit = await createUnit(3);
    const app = await startApp();
    const state = join(folder, `no-content-sync-${randomUUID()}.sqlite`);
    // Pages of 2: the three entries come in two pages.
    const text = await spawnSync(app.url, unit.dn, ["--state", state, "--page-size", "2"]).exit;
    expect(text.out).toMatch(/initial sync completed in [\d.]+ s \(full read\): 3 created/);
    const off = await spawnSync(app.url, unit.dn, ["--state", state, "--json", "--no-content-sync"])
      .exit;
    expect(JSON.parse(off.out)).toMatchObject({ completed: true, read: "full", unchanged: 3 });
    expect(JSON.parse(off.out).readNote).toBeUndefined();
    // The initial sync took no cookie: the first cycle with Content Sync on reads all and takes one.
    const first = await spawnSync(app.url, unit.dn, ["--state", state]).exit;
    expect(first.out).toMatch(/update sync completed in [\d.]+ s \(full read\)/);
    const on = await spawnSync(app.url, unit.dn, ["--state", state]).exit;
    expect(on.out).toMatch(/update sync completed in [\d.]+ s \(Content Sync\)/);
  }, 120_000);

  describe.runIf(existsSync("/usr/sbin/slapd"))("against throwaway servers of its own", () => {
    /** A server of 12 generated people, syncprov configured as given; stopped after the test. */
    async function ownServer(syncprov: Syncprov) {
      const server = await startSlapd(12, { syncprov });
      cleanups.push(() => server.stop());
      const client = new Client({ url: server.url });
      await client.bind(server.bindDn, server.password);
      cleanups.push(() => client.unbind());
      const target = await startApp();
      const state = join(folder, `state-${randomUUID()}.sqlite`);
      const at = { url: server.url, bindDn: server.bindDn, password: server.password };
      let current: DirectorySync | undefined;
      cleanups.push(() => current?.close());
      // The state file is locked while a sync has it open.
      const close = async () => {
        await current?.close();
        current = undefined;
      };
      const open = async () => {
        await close();
        current = createDirectorySync({
          ldap: at,
          baseDn: server.peopleDn,
          target: target.url,
          state,
          mapping: { userId: "employeeNumber" },
        });
        return current;
      };
      return { server, client, app: target, state, open, close };
    }

    it("reads the delete phase of a server with a session log: deletes, renames, modifies and adds", async () => {
      const { server, client, app, open } = await ownServer({ sessionLog: 100 });
      const sync = await open();
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 12 });
      expect(await sync.syncOnce()).toMatchObject({ read: "full", unchanged: 12 });
      const before = await readBackFrom(client, server.peopleDn);
      const { Change, Attribute } = await import("ldapts");
      const [gone, renamed, changed] = [before[2], before[5], before[7]] as [
        Person,
        Person,
        Person,
      ];
      await client.del(gone.dn);
      await client.modifyDN(renamed.dn, "uid=renamed-5");
      await client.modify(`uid=renamed-5,${server.peopleDn}`, [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "uid", values: ["renamed-5"] }),
        }),
      ]);
      await client.modify(changed.dn, [
        new Change({
          operation: "replace",
          modification: new Attribute({ type: "sn", values: ["Nouveau"] }),
        }),
      ]);
      const newcomer = person(40, server.peopleDn);
      await client.add(newcomer.dn, personAttributes(newcomer));
      app.received.length = 0;
      const report = await sync.syncOnce();
      expect(report).toMatchObject({
        completed: true,
        read: "content-sync",
        deleted: 1,
        modified: 2,
        created: 1,
        // 12 held: 1 deleted, 1 created, 2 modified.
        unchanged: 9,
      });
      const [, ...messages] = app.received;
      expect(messages.slice(0, 3)).toEqual([
        { method: "DELETE", path: `/v1/user/${gone.entryUUID}` },
        {
          method: "POST",
          path: "/v1/user/modify",
          body: { uuid: renamed.entryUUID, username: "renamed-5" },
        },
        {
          method: "POST",
          path: "/v1/user/modify",
          body: { uuid: changed.entryUUID, last_name: "Nouveau" },
        },
      ]);
      expect(messages[3]).toMatchObject({ path: "/v1/user/create", body: { username: "user40" } });
      expect(messages).toHaveLength(4);
      expect((await (app.store as SqliteUserStore).list()).sort(byUuid)).toEqual(
        (await readBackFrom(client, server.peopleDn))
          .map((someone) => expectedUser(someone))
          .sort(byUuid),
      );
    }, 120_000);

    it("reads the whole directory against a server without syncprov, and says so once", async () => {
      const { client, server, app, open } = await ownServer(false);
      const sync = await open();
      const first = await sync.syncOnce();
      expect(first).toMatchObject({ completed: true, read: "full", created: 12 });
      // The initial sync asks nothing of Content Sync; the first update cycle finds out.
      expect(first.readNote).toBeUndefined();
      const [someone] = await readBackFrom(client, server.peopleDn);
      await client.del((someone as Person).dn);
      const second = await sync.syncOnce();
      expect(second).toMatchObject({ completed: true, read: "full", deleted: 1, unchanged: 11 });
      expect(second.readNote).toMatch(/does not offer Content Sync/);
      expect(app.received.at(-1)).toEqual({
        method: "DELETE",
        path: `/v1/user/${(someone as Person).entryUUID}`,
      });
      const third = await sync.syncOnce();
      expect(third).toMatchObject({ completed: true, read: "full", unchanged: 11 });
      expect(third.readNote).toBeUndefined();
    }, 120_000);

    it("says once, with the fix, that the account's size limit keeps Content Sync out, and reads pages", async () => {
      // Paged reads unlimited, any other search held to 5 entries: a common sync account.
      const server = await startSlapd(25, { sizeLimit: 5 });
      cleanups.push(() => server.stop());
      const app = await startApp();
      // Person 20 has a clear-text password to bind with; the root DN is exempt from limits.
      const reader = person(20, server.peopleDn);
      const sync = createDirectorySync({
        ldap: { url: server.url, bindDn: reader.dn, password: "clear-20" },
        baseDn: server.peopleDn,
        target: app.url,
        state: join(folder, `state-${randomUUID()}.sqlite`),
      });
      cleanups.push(() => sync.close());
      expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full", created: 25 });
      const second = await sync.syncOnce();
      expect(second).toMatchObject({ completed: true, read: "full", unchanged: 25 });
      expect(second.readNote).toMatch(/size limit.*limits dn\.exact="<bind DN>" size=unlimited/);
      const third = await sync.syncOnce();
      expect(third).toMatchObject({ completed: true, read: "full", unchanged: 25 });
      expect(third.readNote).toBeUndefined();
    }, 120_000);

    it("falls back to a full read, once, when the server refuses the cookie, and loses nothing", async () => {
      const { client, server, app, state, open, close } = await ownServer({ sessionLog: 100 });
      let sync = await open();
      await sync.syncOnce();
      // The first update cycle takes the cookie the test then spoils.
      expect(await sync.syncOnce()).toMatchObject({ read: "full", unchanged: 12 });
      await close();
      const [someone] = await readBackFrom(client, server.peopleDn);
      await client.del((someone as Person).dn);
      // A cookie from a server state newer than this one's, as after a restore from a backup.
      rewriteCookie(state, "rid=000,csn=29990101000000.000000Z#000000#000#000000");
      sync = await open();
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ completed: true, read: "full", deleted: 1, unchanged: 11 });
      expect(report.readNote).toMatch(
        /refused the Content Sync request .*this cycle read the whole directory/,
      );
      expect(app.received.at(-1)).toEqual({
        method: "DELETE",
        path: `/v1/user/${(someone as Person).entryUUID}`,
      });
      // A garbage cookie: slapd ignores it and sends everything, with an empty cookie.
      await close();
      rewriteCookie(state, "not a cookie");
      sync = await open();
      const garbage = await sync.syncOnce();
      expect(garbage).toMatchObject({ completed: true, read: "full", unchanged: 11 });
      expect(garbage.readNote).toMatch(/did not take the Content Sync cookie/);
      expect(await sync.syncOnce()).toMatchObject({ read: "content-sync", unchanged: 11 });
    }, 120_000);
  });
});
