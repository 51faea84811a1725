// The directory sync against a real 389 Directory Server: the one at PLATFORM_INTEGRATION_389DS_URL,
// which .ci/steps/389-ds.sh starts with a generated directory (test/support/389ds.ts). Without it
// the suite is skipped, and its title names the variable.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDirectorySync, type DirectorySync } from "../../src/ldap/index.ts";
import { createProvisioningHandler, type UserRecord } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { type Person, peopleDn, person } from "../support/directory-fixture.ts";
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
    beforeAll(async () => {
      folder = mkdtempSync(join(tmpdir(), "389ds-suite-"));
      admin = new Client({ url: url as string });
      await admin.bind(env("ROOT_DN"), env("PASSWORD"));
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    afterAll(async () => {
      await admin?.unbind();
      rmSync(folder, { recursive: true, force: true });
    });

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
      ldap?: { url: string; bindDn: string; password: string };
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
      expect(app.store.list().sort(byUuid)).toEqual(expected.sort(byUuid));
    }, 600_000);
  },
);
