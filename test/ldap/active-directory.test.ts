// The directory sync against a real Active Directory: the Samba AD DC at PLATFORM_INTEGRATION_AD_URL,
// which .ci/steps/samba-ad.sh starts with a generated domain (test/support/samba-ad.ts). Without
// it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_AD=1 says it must run.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Attribute, BerWriter, Change, Client, Control } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDirectorySync,
  type DirectorySync,
  type LdapSyncOptions,
} from "../../src/ldap/index.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type UserRecord,
} from "../../src/provisioning/index.ts";
import type { AdObject } from "../support/samba-ad.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";

const url = process.env.PLATFORM_INTEGRATION_AD_URL;
const startTlsUrl = process.env.PLATFORM_INTEGRATION_AD_START_TLS_URL ?? "";
const bindDn = process.env.PLATFORM_INTEGRATION_AD_BIND_DN ?? "";
const password = process.env.PLATFORM_INTEGRATION_AD_PASSWORD ?? "";
const caFile = process.env.PLATFORM_INTEGRATION_AD_CA ?? "";
const objectsFile = process.env.PLATFORM_INTEGRATION_AD_OBJECTS ?? "";
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_AD === "1";
const baseDn = "DC=example,DC=test";

if (!url && !required) {
  console.info(
    "active-directory.test.ts: skipped, PLATFORM_INTEGRATION_AD_URL is unset (.ci/steps/samba-ad.sh sets it)",
  );
}

describe.runIf(url || required)("directory sync against a real Samba AD DC", () => {
  if (!url) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_AD=1, but PLATFORM_INTEGRATION_AD_URL is unset",
      );
    });
    return;
  }
  const ca = readFileSync(caFile, "utf8");
  const objects: AdObject[] = JSON.parse(readFileSync(objectsFile, "utf8"));
  const ldap = { url, bindDn, password, tls: { ca } };
  let folder: string;
  let admin: Client;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "ad-suite-"));
    admin = new Client({ url, tlsOptions: { ca } });
    await admin.bind(bindDn, password);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await admin?.unbind();
    rmSync(folder, { recursive: true, force: true });
  });

  /** The application: the SDK's handler over a memory store, on a real port. */
  async function startApp(intercept?: (request: Request) => Response | undefined) {
    const store = new MemoryUserStore();
    const handler = createProvisioningHandler({ store });
    const server = await serveFetchHandler(
      async (request) => intercept?.(request) ?? handler.fetch(request),
    );
    cleanups.push(() => server.close());
    return { url: server.url, store };
  }

  function openSync(options: Partial<LdapSyncOptions> & { target: string }): DirectorySync {
    const sync = createDirectorySync({
      ldap,
      baseDn,
      state: join(folder, `state-${randomUUID()}.sqlite`),
      ...options,
    } as LdapSyncOptions);
    cleanups.push(() => sync.close());
    return sync;
  }

  /** What the application must hold for a generated user: from the fixture and Samba's GUID. */
  function expectedUser(object: AdObject): UserRecord {
    return {
      uuid: object.guid,
      username: object.sAMAccountName as string,
      firstName: object.givenName as string,
      lastName: object.sn as string,
      fullName: object.displayName ?? object.cn,
      ...(object.mail !== undefined && { email: object.mail }),
    };
  }

  const byUuid = (a: UserRecord, b: UserRecord) => a.uuid.localeCompare(b.uuid);
  const generatedUsers = objects.filter((object) => object.kind === "user");

  /** System accounts of a fresh domain: person users with isCriticalSystemObject. */
  const systemAccounts = ["Administrator", "Guest", "krbtgt", "dns-dc1"];

  /** A fresh organizational unit, removed (with what it holds) after the test. */
  async function freshOu(): Promise<string> {
    const dn = `OU=t-${randomUUID().slice(0, 8)},${baseDn}`;
    await admin.add(dn, { objectClass: "organizationalUnit" });
    cleanups.push(async () => {
      const { searchEntries } = await admin.search(dn, { scope: "one", attributes: ["dn"] });
      for (const entry of searchEntries) await admin.del(entry.dn);
      await admin.del(dn);
    });
    return dn;
  }

  /** Adds a user to `ou` over LDAP as an administrator would, and returns its DN and uuid. */
  async function addUser(
    ou: string,
    name: string,
    { disabled = false, sn = "Tester" }: { disabled?: boolean; sn?: string } = {},
  ): Promise<{ dn: string; uuid: string }> {
    const dn = `CN=${name},${ou}`;
    await admin.add(dn, {
      objectClass: "user",
      sAMAccountName: name,
      givenName: name,
      sn,
      userAccountControl: String(disabled ? 0x222 : 0x220),
    });
    return { dn, uuid: await guidOf(dn) };
  }

  /** The GUID string of an entry, through Samba's own rendering (the <GUID=...> extended DN). */
  async function guidOf(dn: string): Promise<string> {
    const { searchEntries } = await admin.search(
      dn,
      { scope: "base", attributes: ["distinguishedName"] },
      [new ExtendedDn()],
    );
    const extended = String(searchEntries[0]?.distinguishedName);
    const guid = /<GUID=([0-9a-f-]{36})>/i.exec(extended)?.[1];
    if (guid === undefined) throw new Error(`No GUID in ${extended}`);
    return guid.toLowerCase();
  }

  /** LDAP_SERVER_EXTENDED_DN_OID with the flag 1: the GUID in its string form. */
  class ExtendedDn extends Control {
    constructor() {
      super("1.2.840.113556.1.4.529", { critical: true });
    }
    override writeControl(writer: BerWriter) {
      const value = new BerWriter();
      value.startSequence();
      value.writeInt(1);
      value.endSequence();
      writer.writeBuffer(value.buffer, 0x04);
    }
  }

  const setDisabled = (dn: string, disabled: boolean) =>
    admin.modify(dn, [
      new Change({
        operation: "replace",
        modification: new Attribute({
          type: "userAccountControl",
          values: [String(disabled ? 0x222 : 0x220)],
        }),
      }),
    ]);

  const replace = (dn: string, type: string, value: string) =>
    admin.modify(dn, [
      new Change({
        operation: "replace",
        modification: new Attribute({ type, values: [value] }),
      }),
    ]);

  it("reads person user accounts only by default: usernames from sAMAccountName, disabled and system accounts counted", async () => {
    const app = await startApp();
    const sync = openSync({ target: app.url });
    const report = await sync.syncOnce();
    const people = objects.filter(
      (object) =>
        (object.kind === "user" && (object.userAccountControl as number) % 4 < 2) ||
        /^svc-/.test(object.cn),
    );
    expect(report).toMatchObject({
      completed: true,
      created: people.length,
      disabled: generatedUsers.filter((user) => (user.userAccountControl as number) & 2).length,
      nonUsers: systemAccounts.length,
      skipped: 0,
    });
    const held = await app.store.list();
    expect(held.map((user) => user.uuid).sort()).toEqual(
      people.map((object) => object.guid).sort(),
    );
    // No computer (DC1$, WS0$), contact, system account or disabled account arrived.
    expect(
      held.filter((user) => /\$$|^Contact|^krbtgt$|^Guest$/.test(user.username ?? "")),
    ).toEqual([]);
    for (const object of people.filter((object) => object.kind === "user")) {
      expect(await app.store.get(object.guid)).toEqual(expectedUser(object));
    }
    expect(
      await app.store.get(objects.find((object) => object.cn === "svc-reader")?.guid as string),
    ).toMatchObject({ username: "svc-reader" });
  });

  describe("a disabled account (userAccountControl ACCOUNTDISABLE)", () => {
    async function scenario(disabledAccounts?: "keep" | "sync" | "delete") {
      const ou = await freshOu();
      const anna = await addUser(ou, "t-anna");
      const bert = await addUser(ou, "t-bert");
      const app = await startApp();
      const sync = openSync({
        target: app.url,
        baseDn: ou,
        ...(disabledAccounts && { disabledAccounts }),
      });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 2, disabled: 0 });
      await setDisabled(bert.dn, true);
      await replace(bert.dn, "sn", "Renamed");
      const dora = await addUser(ou, "t-dora", { disabled: true });
      const whileDisabled = await sync.syncOnce();
      const heldWhileDisabled = await app.store.list();
      await setDisabled(bert.dn, false);
      await setDisabled(dora.dn, false);
      const enabled = await sync.syncOnce();
      return { app, anna, bert, dora, whileDisabled, heldWhileDisabled, enabled };
    }

    it("is kept by default: no delete, no modify, no create while disabled; the changes follow once enabled", async () => {
      const { app, bert, dora, whileDisabled, heldWhileDisabled, enabled } = await scenario();
      expect(whileDisabled).toMatchObject({
        completed: true,
        created: 0,
        modified: 0,
        deleted: 0,
        disabled: 2,
      });
      expect(heldWhileDisabled.find((user) => user.uuid === bert.uuid)).toMatchObject({
        lastName: "Tester",
      });
      expect(heldWhileDisabled.find((user) => user.uuid === dora.uuid)).toBeUndefined();
      expect(enabled).toMatchObject({ completed: true, created: 1, modified: 1, disabled: 0 });
      expect(await app.store.get(bert.uuid)).toMatchObject({ lastName: "Renamed" });
      expect(await app.store.get(dora.uuid)).toMatchObject({ username: "t-dora" });
    });

    it('is sent as any user with "sync"', async () => {
      const { bert, dora, whileDisabled, heldWhileDisabled } = await scenario("sync");
      expect(whileDisabled).toMatchObject({ created: 1, modified: 1, deleted: 0, disabled: 2 });
      expect(heldWhileDisabled.find((user) => user.uuid === bert.uuid)).toMatchObject({
        lastName: "Renamed",
      });
      expect(heldWhileDisabled.find((user) => user.uuid === dora.uuid)).toBeDefined();
    });

    it('is deleted with "delete", and created again once enabled', async () => {
      const { app, bert, whileDisabled, heldWhileDisabled, enabled } = await scenario("delete");
      expect(whileDisabled).toMatchObject({ created: 0, modified: 0, deleted: 1, disabled: 2 });
      expect(heldWhileDisabled.map((user) => user.username)).toEqual(["t-anna"]);
      expect(enabled).toMatchObject({ created: 2, deleted: 0 });
      expect(await app.store.get(bert.uuid)).toMatchObject({ lastName: "Renamed" });
    });
  });

  describe("update cycles with DirSync", () => {
    const dirSyncAccount = {
      url,
      bindDn: `CN=svc-dirsync,CN=Users,${baseDn}`,
      password: "Throwaway-Reader-1",
      tls: { ca },
    };
    type Added = { dn: string; uuid: string };

    /** The users of `ou` the way a full read maps them: what the application must hold. */
    async function directoryView(ou: string) {
      const { searchEntries } = await admin.search(ou, {
        filter: "(&(objectCategory=person)(objectClass=user))",
        attributes: [
          "sAMAccountName",
          "givenName",
          "sn",
          "cn",
          "displayName",
          "mail",
          "userAccountControl",
        ],
      });
      const users: UserRecord[] = [];
      // ldapts gives an attribute the entry lacks as an empty list.
      const text = (value: unknown) =>
        Array.isArray(value) && value.length === 0 ? undefined : String(value);
      for (const entry of searchEntries) {
        if (Number(entry.userAccountControl) & 2) continue;
        users.push({
          uuid: await guidOf(entry.dn),
          username: String(entry.sAMAccountName),
          firstName: String(entry.givenName),
          lastName: String(entry.sn),
          fullName: text(entry.displayName) ?? String(entry.cn),
          ...(text(entry.mail) !== undefined && { email: String(entry.mail) }),
        });
      }
      return users.sort(byUuid);
    }

    /** An OU of five users, synced until the next cycle can use DirSync. */
    async function synced(
      bindAs = dirSyncAccount,
      intercept?: (request: Request) => Response | undefined,
    ) {
      const ou = await freshOu();
      const users: Added[] = [];
      for (const name of ["t-ada", "t-ben", "t-cyd", "t-dan", "t-eve"]) {
        users.push(await addUser(ou, name));
      }
      const app = await startApp(intercept);
      const state = join(folder, `state-${randomUUID()}.sqlite`);
      const sync = openSync({ target: app.url, baseDn: ou, ldap: bindAs, state });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, mode: "initial", created: 5 });
      // The update after the initial sync reads in full and takes the cookie.
      const first = await sync.syncOnce();
      expect(first).toMatchObject({ completed: true, read: "full", unchanged: 5 });
      return { ou, users: users as [Added, Added, Added, Added, Added], app, sync, state, first };
    }

    it("reads only what changed: edits, a rename, a disable, a move out and in, a delete and an add", async () => {
      const { ou, users, app, sync } = await synced();
      const [ada, ben, cyd, dan, eve] = users;
      const elsewhere = await freshOu();
      const newcomer = await addUser(elsewhere, "t-fay");
      await replace(ada.dn, "mail", "ada@changed.example");
      await replace(ben.dn, "sAMAccountName", "t-ben2");
      await setDisabled(cyd.dn, true);
      await admin.modifyDN(dan.dn, `CN=t-dan,${elsewhere}`);
      await admin.del(eve.dn);
      await addUser(ou, "t-gus");
      await admin.modifyDN(newcomer.dn, `CN=t-fay,${ou}`);
      const report = await sync.syncOnce();
      expect(report).toMatchObject({
        completed: true,
        read: "dirsync",
        created: 2,
        modified: 2,
        deleted: 2,
        disabled: 1,
      });
      expect(report.readNote).toBeUndefined();
      // Every field as a full read maps it, not only the attributes DirSync sent; the disabled
      // account kept as it was.
      const kept = (await app.store.get(cyd.uuid)) as UserRecord;
      expect(kept).toMatchObject({ username: "t-cyd" });
      expect((await app.store.list()).sort(byUuid)).toEqual(
        [...(await directoryView(ou)), kept].sort(byUuid),
      );
      expect(await app.store.get(dan.uuid)).toBeUndefined();
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "dirsync",
        created: 0,
        modified: 0,
        deleted: 0,
      });
    });

    it("keeps the cookie where it was when a change was not acknowledged", async () => {
      let refuse = false;
      const { users, app, sync } = await synced(dirSyncAccount, (request) =>
        refuse && new URL(request.url).pathname !== "/v1/ping"
          ? new Response(null, { status: 503 })
          : undefined,
      );
      await replace(users[0].dn, "sn", "Changed");
      refuse = true;
      expect(await sync.syncOnce()).toMatchObject({
        completed: false,
        read: "dirsync",
        modified: 0,
      });
      refuse = false;
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "dirsync",
        modified: 1,
      });
      expect(await app.store.get(users[0].uuid)).toMatchObject({ lastName: "Changed" });
    });

    it("reads in full, and says why, when the account may not use DirSync", async () => {
      const reader = { ...dirSyncAccount, bindDn: `CN=svc-reader,CN=Users,${baseDn}` };
      const { users, app, sync, first } = await synced(reader);
      // A lasting reason is said once, in the first update cycle it applies to.
      expect(first.readNote).toMatch(/may not use DirSync.*"Replicating Directory Changes"/);
      await replace(users[0].dn, "sn", "Changed");
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ completed: true, read: "full", modified: 1 });
      expect(await app.store.get(users[0].uuid)).toMatchObject({ lastName: "Changed" });
    });

    it("reads in full, and says why, when the account cannot see deletions", async () => {
      const blind = { ...dirSyncAccount, bindDn: `CN=svc-blind,CN=Users,${baseDn}` };
      const { users, app, sync, first } = await synced(blind);
      expect(first.readNote).toMatch(/cannot read the Deleted Objects container/);
      await admin.del(users[0].dn);
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ completed: true, read: "full", deleted: 1 });
      expect(await app.store.list()).toHaveLength(4);
    });

    it("reads in full, and says why, when another domain controller answers", async () => {
      const { ou, users, app, sync, state } = await synced();
      await sync.close();
      // The cookie as another DC (another invocationId) would have issued it.
      const db = new DatabaseSync(state);
      const row = db.prepare("SELECT value FROM meta WHERE key = 'changeCookie'").get() as {
        value: string;
      };
      const kept = JSON.parse(row.value) as { scope: string; cookie: string };
      const cookie = { ...JSON.parse(kept.cookie), dc: "00000000-0000-0000-0000-000000000001" };
      db.prepare("UPDATE meta SET value = ? WHERE key = 'changeCookie'").run(
        JSON.stringify({ ...kept, cookie: JSON.stringify(cookie) }),
      );
      db.close();
      await replace(users[1].dn, "sn", "Changed");
      const again = openSync({ target: app.url, baseDn: ou, ldap: dirSyncAccount, state });
      const report = await again.syncOnce();
      expect(report).toMatchObject({ completed: true, read: "full", modified: 1 });
      expect(report.readNote).toMatch(/another domain controller/);
      expect(await again.syncOnce()).toMatchObject({ completed: true, read: "dirsync" });
    });
  });

  /** The sync CLI, one cycle, bound as the administrator over LDAPS; its exit, output and errors. */
  async function runCli(target: string, ou: string, extra: string[]) {
    const passwordFile = join(folder, `bind-password-${randomUUID()}`);
    writeFileSync(passwordFile, password);
    const child = spawn(
      process.execPath,
      [
        "--disable-warning=ExperimentalWarning",
        new URL("../../src/cli/index.ts", import.meta.url).pathname,
        "sync",
        target,
        ...["--ldap-url", url as string, "--ldap-ca", caFile, "--bind-dn", bindDn],
        ...["--bind-password-file", passwordFile, "--base-dn", ou, "--once", ...extra],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    const [code] = await once(child, "exit");
    return { code, out, err };
  }

  it("takes --disabled-accounts on the command line, and reports the disabled", async () => {
    const ou = await freshOu();
    const enabled = await addUser(ou, "t-cli1");
    const disabled = await addUser(ou, "t-cli2", { disabled: true });
    const app = await startApp();
    const state = ["--state", join(folder, `state-${randomUUID()}.sqlite`)];
    const wrong = await runCli(app.url, ou, [...state, "--disabled-accounts", "drop"]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.err).toMatch(/"keep", "sync" or "delete"/);
    const text = await runCli(app.url, ou, state);
    expect(text.out).toMatch(/Active Directory: 1 disabled accounts, 0 system accounts left out/);
    expect((await app.store.list()).map((user) => user.uuid)).toEqual([enabled.uuid]);
    const json = await runCli(app.url, ou, [...state, "--json", "--disabled-accounts", "sync"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ completed: true, created: 1, disabled: 1 });
    expect(await app.store.get(disabled.uuid)).toMatchObject({ username: "t-cli2" });
  });

  it("connects with StartTLS on the plain port, Samba refusing a plain simple bind", async () => {
    const ou = await freshOu();
    const someone = await addUser(ou, "t-tls");
    const app = await startApp();
    const plain = openSync({
      target: app.url,
      baseDn: ou,
      ldap: { url: startTlsUrl, bindDn, password },
    });
    await expect(plain.syncOnce()).rejects.toMatchObject({
      fatal: true,
      message: expect.stringMatching(/ldaps:\/\/ or startTls/),
    });
    const upgraded = openSync({
      target: app.url,
      baseDn: ou,
      ldap: { url: startTlsUrl, bindDn, password, tls: { ca }, startTls: true },
    });
    expect(await upgraded.syncOnce()).toMatchObject({ completed: true, created: 1 });
    expect(await app.store.get(someone.uuid)).toMatchObject({ username: "t-tls" });
  });

  it("syncs every user of a filter of yours, the disabled with 'sync', over LDAPS with the domain's CA", async () => {
    const app = await startApp();
    const sync = openSync({
      target: app.url,
      baseDn: `OU=Staff,${baseDn}`,
      filter: "(&(objectCategory=person)(objectClass=user))",
      usernameField: "sAMAccountName",
      disabledAccounts: "sync",
    });
    const report = await sync.syncOnce();
    expect(report).toMatchObject({
      completed: true,
      created: generatedUsers.length,
      failed: 0,
      disabled: generatedUsers.filter((user) => (user.userAccountControl as number) & 2).length,
    });
    expect((await app.store.list()).sort(byUuid)).toEqual(
      generatedUsers.map(expectedUser).sort(byUuid),
    );
  });
});
