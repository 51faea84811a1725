// The directory sync against a real OpenLDAP slapd: the one at PLATFORM_INTEGRATION_LDAP_URL,
// which .ci/steps/slapd.sh starts with a generated directory (test/support/slapd.ts). Without it
// the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_LDAP=1 says it must run.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDirectorySync, type DirectorySync } from "../../src/ldap/index.ts";
import {
  createProvisioningHandler,
  type UserRecord,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { toWire } from "../../src/sync/messages.ts";
import {
  type Person,
  peopleDn,
  person,
  personAttributes,
  recordedAdUser,
  suffix,
} from "../support/directory-fixture.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";

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
    const handler = createProvisioningHandler({ store });
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

  function openSync(options: {
    target: string;
    baseDn: string;
    passwords?: boolean;
    usernameField?: string;
    filter?: string;
  }): DirectorySync {
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
    const list = (value: unknown) =>
      value === undefined ? [] : Array.isArray(value) ? (value as string[]) : [value as string];
    return searchEntries.map((entry) => ({
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
    }));
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

  it(`syncs the generated directory (${peopleCount} people) into a SQLite store, field by field`, async () => {
    const app = await startApp();
    const sync = openSync({ target: app.url, baseDn: peopleDn, passwords: true });
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
    const stored = (app.store as SqliteUserStore).list();
    expect(stored.sort(byUuid)).toEqual(expected.sort(byUuid));
    // What the fixture holds: non-ASCII names, users without mail, a second mail and uid.
    expect(stored.some((user) => user.lastName === "Ångström")).toBe(true);
    expect(stored.filter((user) => user.email === undefined).length).toBeGreaterThan(
      peopleCount / 10,
    );
    expect(stored.find((user) => user.username === "user5")).toBeDefined();

    const again = await sync.syncOnce();
    expect(again).toMatchObject({ completed: true, mode: "update", unchanged: peopleCount });
  }, 600_000);

  it("sends changes, renames and deletes made in slapd, then agrees with it again", async () => {
    const unit = await createUnit(40);
    const app = await startApp();
    const sync = openSync({ target: app.url, baseDn: unit.dn });
    expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 40 });
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
    expect(report).toMatchObject({
      completed: true,
      created: 1,
      modified: 3,
      deleted: 1,
      unchanged: 36,
    });
    const messages = app.received.slice(1);
    expect(messages[0]).toEqual({ method: "DELETE", path: `/v1/user/${gone.entryUUID}` });
    const modifies = messages.filter(({ path }) => path === "/v1/user/modify");
    expect(modifies.map(({ body }) => body)).toEqual(
      expect.arrayContaining([
        { uuid: changed.entryUUID, first_name: "Renée" },
        { uuid: renamed.entryUUID, username: "renamed-4" },
        { uuid: noMail.entryUUID, email: null },
      ]),
    );
    const now = await readBack(unit.dn);
    expect((app.store as SqliteUserStore).list().sort(byUuid)).toEqual(
      now.map((someone) => expectedUser(someone)).sort(byUuid),
    );
    expect((app.store as SqliteUserStore).get(renamed.entryUUID)?.username).toBe("renamed-4");
  }, 120_000);

  it("loses nothing and keeps the order when the application answers 503 for a while", async () => {
    const unit = await createUnit(60);
    let creates = 0;
    // Creates 20 to 34 meet a 503: the application is restarting mid-sync.
    const app = await startApp(undefined, ({ path }) => {
      if (path !== "/v1/user/create") return undefined;
      creates++;
      return creates >= 20 && creates < 35 ? 503 : undefined;
    });
    const sync = openSync({ target: app.url, baseDn: unit.dn });
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
    expect((app.store as SqliteUserStore).count()).toBe(60);
  }, 120_000);

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
    expect((app.store as SqliteUserStore).count()).toBe(80);
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
    expect((app.store as SqliteUserStore).list()).toEqual([recordedAdUser]);
  });

  it("stops at once, with its fix and without the password, when the bind is refused", async () => {
    const app = await startApp();
    const secret = "wrong-secret-value";
    const sync = createDirectorySync({
      ldap: { url, bindDn, password: secret },
      baseDn: peopleDn,
      target: app.url,
      state: join(folder, `state-${randomUUID()}.sqlite`),
    });
    cleanups.push(() => sync.close());
    const failure = await sync.syncOnce().catch((error: Error) => error);
    expect(failure).toMatchObject({ name: "DirectoryError", fatal: true });
    expect((failure as Error).message).toMatch(/bind DN or its password was refused/);
    expect((failure as Error).message).not.toContain(secret);
    expect(app.received).toEqual([{ method: "GET", path: "/v1/ping" }]);
  });

  it("says which base DN or filter is wrong, and reports an unreachable server as retryable", async () => {
    const app = await startApp();
    const missing = openSync({ target: app.url, baseDn: `ou=nowhere,${suffix}` });
    await expect(missing.syncOnce()).rejects.toThrow(/base DN does not exist/);
    const badFilter = openSync({ target: app.url, baseDn: peopleDn, filter: "(uid=a" });
    await expect(badFilter.syncOnce()).rejects.toThrow(/The filter \(uid=a is invalid/);
    const unreachable = createDirectorySync({
      ldap: { url: "ldap://127.0.0.1:1", bindDn, password },
      baseDn: peopleDn,
      target: app.url,
      state: join(folder, `state-${randomUUID()}.sqlite`),
    });
    cleanups.push(() => unreachable.close());
    const report = await unreachable.syncOnce();
    expect(report).toMatchObject({ completed: false, failed: 1 });
    expect(report.directoryError).toMatch(/ECONNREFUSED/);
  });

  it("sync --read-user reads every user back and reports each difference", async () => {
    const unit = await createUnit(5);
    const store = track(new SqliteUserStore(":memory:"));
    const app = await startApp(store);
    const reader = createServer((request, response) => {
      const uuid = decodeURIComponent((request.url as string).slice("/users/".length));
      const user = store.get(uuid);
      // The application keeps its own spelling of one user's name: a difference to report.
      if (user && uuid === unit.people[2]?.entryUUID) user.firstName = "Someone Else";
      response.writeHead(user ? 200 : 404, { "content-type": "application/json" });
      // The read route's contract: the stored user in the wire's snake_case names.
      response.end(user ? JSON.stringify(toWire(user)) : "");
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
});
