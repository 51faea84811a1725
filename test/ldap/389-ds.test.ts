// The directory sync against a real 389 Directory Server: the one at PLATFORM_INTEGRATION_389DS_URL,
// which .ci/steps/389-ds.sh starts with a generated directory (test/support/389ds.ts). Without it
// the suite is skipped, and its title names the variable.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDirectorySync, type DirectorySync } from "../../src/ldap/index.ts";
import { createProvisioningHandler, type UserRecord } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { start389 } from "../support/389ds.ts";
import {
  type Person,
  peopleDn,
  person,
  personAttributes,
  suffix,
} from "../support/directory-fixture.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";

const url = process.env.PLATFORM_INTEGRATION_389DS_URL;
const env = (name: string) => process.env[`PLATFORM_INTEGRATION_389DS_${name}`] ?? "";
const peopleCount = Number(env("PEOPLE") || 0);

/** What the mapping must make of a generated person, with the entryUUID 389-DS holds. */
function expectedUser(someone: Person, entryUUID: string): UserRecord {
  return {
    uuid: entryUUID,
    userId: someone.employeeNumber,
    username: someone.uid[0] as string,
    firstName: someone.givenName,
    lastName: someone.sn,
    fullName: someone.displayName ?? (someone.cn[0] as string),
    ...(someone.mail[0] !== undefined && { email: someone.mail[0] }),
  };
}

if (!url) {
  console.info(
    "389-DS suite skipped: PLATFORM_INTEGRATION_389DS_URL is unset (.ci/steps/389-ds.sh sets it)",
  );
}

const byUuid = (a: { uuid: string }, b: { uuid: string }) => a.uuid.localeCompare(b.uuid);

describe.skipIf(!url)(
  `directory sync against a real 389 Directory Server (PLATFORM_INTEGRATION_389DS_URL${url ? "" : " unset: skipped"})`,
  () => {
    const ldap = { url: url as string, bindDn: env("BIND_DN"), password: env("PASSWORD") };
    let folder: string;
    let admin: Client;
    const cleanups: (() => unknown)[] = [];
    // A second server in 389-DS's default Content Sync configuration, for the last test: created
    // while the tests before it run (dscreate spends most of its time waiting).
    let ownCookiesOnly: ReturnType<typeof start389> | undefined;
    beforeAll(async () => {
      folder = mkdtempSync(join(tmpdir(), "389ds-suite-"));
      admin = new Client({ url: url as string });
      await admin.bind(env("ROOT_DN"), env("PASSWORD"));
      ownCookiesOnly = start389(5, { allowOpenLdap: false });
      // A failure is the last test's to report; the suite must not stop on an unhandled one.
      ownCookiesOnly.catch(() => undefined);
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    afterAll(async () => {
      await ownCookiesOnly?.then((server) => server.stop()).catch(() => undefined);
      await admin?.unbind();
      rmSync(folder, { recursive: true, force: true });
      // The second server may still be on its way up when only some tests ran.
    }, 300_000);

    /** The application: the SDK's handler over a SQLite store, on a real port. */
    async function startApp() {
      const store = new SqliteUserStore(join(folder, `app-${randomUUID()}.db`), {
        synchronous: "normal",
      });
      cleanups.push(() => store.close());
      const handler = createProvisioningHandler({ store });
      const received: { method: string; path: string; body?: Record<string, unknown> }[] = [];
      const server = await serveFetchHandler(async (request) => {
        const path = new URL(request.url).pathname;
        const text = request.method === "POST" ? await request.clone().text() : "";
        received.push({ method: request.method, path, ...(text && { body: JSON.parse(text) }) });
        return handler.fetch(request);
      });
      cleanups.push(() => server.close());
      return { url: server.url, store, received };
    }

    function openSync(options: {
      target: string;
      baseDn: string;
      filter?: string;
      ldap?: {
        url: string;
        bindDn: string;
        password: string;
        tls?: { ca: Buffer };
        startTls?: boolean;
      };
      state?: string;
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

    /** The entryUUIDs 389-DS gave the entries under `base`, by DN. */
    async function entryUuids(base: string): Promise<Map<string, string>> {
      const { searchEntries } = await admin.search(base, {
        filter: "(objectClass=inetOrgPerson)",
        attributes: ["entryUUID"],
        paged: { pageSize: 500 },
      });
      return new Map(searchEntries.map((entry) => [entry.dn, String(entry.entryUUID)]));
    }

    /** A fresh organizational unit of generated people from `from` on, removed after the test. */
    async function createUnit(count: number, from = 0): Promise<{ dn: string; people: Person[] }> {
      const dn = `ou=unit-${randomUUID().slice(0, 8)},${suffix}`;
      await admin.add(dn, {
        objectClass: ["organizationalUnit"],
        ou: [dn.slice(3, dn.indexOf(","))],
      });
      const people: Person[] = [];
      for (let index = from; index < from + count; index++) {
        const someone = person(index, dn);
        await admin.add(someone.dn, personAttributes(someone));
        people.push(someone);
      }
      cleanups.push(async () => {
        const { searchEntries } = await admin.search(dn, { scope: "one", attributes: ["1.1"] });
        for (const { dn: child } of searchEntries) await admin.del(child);
        await admin.del(dn);
      });
      const uuids = await entryUuids(dn);
      return {
        dn,
        people: people.map((someone) => ({
          ...someone,
          entryUUID: uuids.get(someone.dn) as string,
        })),
      };
    }

    /** The users the application must hold for the people under `base`, as 389-DS holds them now. */
    async function directoryView(
      base: string,
      filter = "(objectClass=inetOrgPerson)",
    ): Promise<UserRecord[]> {
      const { searchEntries } = await admin.search(base, {
        filter,
        attributes: ["*", "entryUUID"],
      });
      const list = (value: unknown) =>
        value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
      return searchEntries
        .map((entry) =>
          expectedUser(
            {
              dn: entry.dn,
              entryUUID: String(entry.entryUUID),
              uid: list(entry.uid),
              givenName: String(entry.givenName),
              sn: String(entry.sn),
              cn: list(entry.cn),
              ...(entry.displayName !== undefined && { displayName: String(entry.displayName) }),
              mail: list(entry.mail),
              employeeNumber: String(entry.employeeNumber),
            },
            String(entry.entryUUID),
          ),
        )
        .sort(byUuid);
    }

    const replace = (type: string, values: string[]) =>
      new Change({ operation: "replace", modification: new Attribute({ type, values }) });

    it(`syncs the generated directory (${peopleCount} people, above the server's size limit of 2,000) through an account with nsSizeLimit: -1`, async () => {
      const app = await startApp();
      const sync = openSync({ target: app.url, baseDn: peopleDn });
      const report = await sync.syncOnce();
      expect(report).toMatchObject({
        completed: true,
        mode: "initial",
        created: peopleCount,
        skipped: 0,
        failed: 0,
      });
      const uuids = await entryUuids(peopleDn);
      expect(uuids.size).toBe(peopleCount);
      const expected = Array.from({ length: peopleCount }, (_, index) => {
        const someone = person(index);
        return expectedUser(someone, uuids.get(someone.dn) as string);
      });
      expect((await app.store.list()).sort(byUuid)).toEqual(expected.sort(byUuid));
    }, 600_000);

    it("sends renames, a surname change, creates, mail changes, deletes and moves through Content Sync, reading only what changed", async () => {
      const unit = await createUnit(40);
      const elsewhere = await createUnit(2, 200);
      const app = await startApp();
      const sync = openSync({ target: app.url, baseDn: unit.dn });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 40 });
      // The initial sync takes no cookie; the first update cycle reads all and takes one.
      const second = await sync.syncOnce();
      expect(second).toMatchObject({ completed: true, read: "full", unchanged: 40 });
      expect(second.readNote).toBeUndefined();

      const p = unit.people;
      for (const index of [1, 2]) {
        const someone = p[index] as Person;
        await admin.modifyDN(someone.dn, `uid=renamed-${index}`);
        await admin.modify(`uid=renamed-${index},${unit.dn}`, [
          replace("uid", [`renamed-${index}`]),
        ]);
      }
      await admin.modify((p[3] as Person).dn, [replace("sn", ["Nouveau"])]);
      for (const index of [100, 101]) {
        const newcomer = person(index, unit.dn);
        await admin.add(newcomer.dn, personAttributes(newcomer));
      }
      await admin.modify((p[5] as Person).dn, [replace("mail", ["fifth@example.test"])]);
      await admin.modify((p[6] as Person).dn, [
        new Change({ operation: "delete", modification: new Attribute({ type: "mail" }) }),
      ]);
      await admin.del((p[7] as Person).dn);
      // Moved out of the base, and into it.
      await admin.modifyDN((p[8] as Person).dn, `uid=user8,${elsewhere.dn}`);
      // Person 201 has one uid (200 has two, whose order a modrdn may change).
      const movedIn = elsewhere.people[1] as Person;
      await admin.modifyDN(movedIn.dn, `uid=user201,${unit.dn}`);
      app.received.length = 0;

      const report = await sync.syncOnce();
      expect(report).toMatchObject({
        completed: true,
        read: "content-sync",
        created: 3,
        modified: 5,
        deleted: 2,
        skipped: 0,
        // 40 held: 2 gone, 3 come, 5 changed.
        unchanged: 33,
      });
      expect(report.readNote).toBeUndefined();
      const [, ...messages] = app.received;
      expect(messages).toHaveLength(10);
      expect(messages.slice(0, 2)).toEqual(
        expect.arrayContaining([
          { method: "DELETE", path: `/v1/user/${(p[7] as Person).entryUUID}` },
          { method: "DELETE", path: `/v1/user/${(p[8] as Person).entryUUID}` },
        ]),
      );
      const modifies = messages.filter(({ path }) => path === "/v1/user/modify");
      expect(modifies.map(({ body }) => body)).toEqual(
        expect.arrayContaining([
          { uuid: (p[1] as Person).entryUUID, username: "renamed-1" },
          { uuid: (p[2] as Person).entryUUID, username: "renamed-2" },
          { uuid: (p[3] as Person).entryUUID, last_name: "Nouveau" },
          { uuid: (p[5] as Person).entryUUID, email: "fifth@example.test" },
          { uuid: (p[6] as Person).entryUUID, email: null },
        ]),
      );
      const creates = messages.filter(({ path }) => path === "/v1/user/create");
      expect(creates.map(({ body }) => body?.username).sort()).toEqual([
        "user100",
        "user101",
        "user201",
      ]);
      expect(creates.find(({ body }) => body?.username === "user201")?.body?.uuid).toBe(
        movedIn.entryUUID,
      );
      expect((await app.store.list()).sort(byUuid)).toEqual(await directoryView(unit.dn));

      app.received.length = 0;
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "content-sync",
        created: 0,
        modified: 0,
        deleted: 0,
        unchanged: 41,
      });
      expect(app.received.slice(1)).toEqual([]);
    }, 300_000);

    it("deletes a user a modify took out of the filter, which 389-DS's Content Sync does not report", async () => {
      const unit = await createUnit(6);
      const app = await startApp();
      const filter = "(&(objectClass=inetOrgPerson)(employeeNumber=*))";
      const sync = openSync({ target: app.url, baseDn: unit.dn, filter });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 6 });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full", unchanged: 6 });
      const [left, back] = unit.people as [Person, Person];
      const drop = new Change({
        operation: "delete",
        modification: new Attribute({ type: "employeeNumber" }),
      });
      await admin.modify(left.dn, [drop]);
      await admin.modify(back.dn, [drop]);
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "content-sync",
        deleted: 2,
        unchanged: 4,
      });
      // Back in the filter: created again.
      await admin.modify(back.dn, [replace("employeeNumber", ["42"])]);
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "content-sync",
        created: 1,
        deleted: 0,
        unchanged: 4,
      });
      expect((await app.store.list()).sort(byUuid)).toEqual(await directoryView(unit.dn, filter));
    }, 300_000);

    it("reads pages past the server's size limit of 2,000, and keeps Content Sync off, with the fix (nsSizeLimit), where the account is held to it", async () => {
      const app = await startApp();
      const sync = openSync({
        target: app.url,
        baseDn: peopleDn,
        ldap: { url: url as string, bindDn: env("LIMITED_BIND_DN"), password: env("PASSWORD") },
      });
      // Paged reads are not held to the limit; a Content Sync refresh is one search, which is.
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: peopleCount });
      const second = await sync.syncOnce();
      expect(second).toMatchObject({ completed: true, read: "full", unchanged: peopleCount });
      expect(second.readNote).toMatch(/size limit.*nsSizeLimit: -1 on the bind account's entry/);
      const third = await sync.syncOnce();
      expect(third).toMatchObject({ completed: true, read: "full", unchanged: peopleCount });
      expect(third.readNote).toBeUndefined();
    }, 300_000);

    it("syncs over LDAPS with the server's CA, Content Sync included, and names the fix for a certificate it does not trust", async () => {
      const unit = await createUnit(4);
      const app = await startApp();
      const ldaps = {
        url: env("LDAPS_URL"),
        bindDn: env("BIND_DN"),
        password: env("PASSWORD"),
      };
      const sync = openSync({
        target: app.url,
        baseDn: unit.dn,
        ldap: { ...ldaps, tls: { ca: readFileSync(env("CA")) } },
      });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 4 });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, read: "full" });
      await admin.modify((unit.people[0] as Person).dn, [replace("sn", ["Chiffré"])]);
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        read: "content-sync",
        modified: 1,
      });
      expect((await app.store.get((unit.people[0] as Person).entryUUID))?.lastName).toBe("Chiffré");

      const untrusting = openSync({ target: app.url, baseDn: unit.dn, ldap: ldaps });
      await expect(untrusting.syncOnce()).rejects.toThrow(/not trusted.*--ldap-ca/);
    }, 300_000);

    it("syncs over StartTLS with the server's CA (the certificate names localhost)", async () => {
      const unit = await createUnit(3);
      const app = await startApp();
      const sync = openSync({
        target: app.url,
        baseDn: unit.dn,
        ldap: {
          url: (url as string).replace("127.0.0.1", "localhost"),
          bindDn: env("BIND_DN"),
          password: env("PASSWORD"),
          tls: { ca: readFileSync(env("CA")) },
          startTls: true,
        },
      });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 3 });
      await admin.modify((unit.people[2] as Person).dn, [replace("mail", ["tls@example.test"])]);
      expect(await sync.syncOnce()).toMatchObject({ completed: true, modified: 1 });
      expect((await app.store.get((unit.people[2] as Person).entryUUID))?.email).toBe(
        "tls@example.test",
      );
    }, 300_000);

    it("reads the whole directory, and says once how to turn Content Sync on, where 389-DS allows only its own cookies (its default)", async () => {
      const server = await (ownCookiesOnly as ReturnType<typeof start389>);
      const app = await startApp();
      const sync = openSync({
        target: app.url,
        baseDn: server.peopleDn,
        ldap: { url: server.url, bindDn: server.bindDn, password: server.password },
      });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 5 });
      const client = new Client({ url: server.url });
      await client.bind(server.rootDn, server.password);
      cleanups.push(() => client.unbind());
      await client.del(person(1, server.peopleDn).dn);
      const second = await sync.syncOnce();
      expect(second).toMatchObject({ completed: true, read: "full", deleted: 1, unchanged: 4 });
      expect(second.readNote).toMatch(
        /refused an OpenLDAP-style first Content Sync cookie.*--allow-openldap on.*entryuuid:targetEntryUUID.*every cycle reads the whole directory/,
      );
      const third = await sync.syncOnce();
      expect(third).toMatchObject({ completed: true, read: "full", unchanged: 4 });
      expect(third.readNote).toBeUndefined();
    }, 600_000);
  },
);
