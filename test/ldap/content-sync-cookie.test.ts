// A changed entry that a Content Sync cycle cannot map keeps the cookie where it was, on a real
// slapd (the path every directory shares): a bind account that may not read one entry's
// entryUUID gets that entry without it; the cycle skips and reports it, and the next cycle, by an
// account that may, still finds the change there. Runs where the slapd suite runs.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Attribute, Change, Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDirectorySync } from "../../src/ldap/index.ts";
import { createProvisioningHandler } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { suffix } from "../support/directory-fixture.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";
import { type RunningSlapd, startSlapd } from "../support/slapd.ts";

const wanted =
  (process.env.PLATFORM_INTEGRATION_LDAP_URL !== undefined ||
    process.env.PLATFORM_INTEGRATION_REQUIRE_LDAP === "1") &&
  existsSync("/usr/sbin/slapd");
const readerDn = `cn=reader,${suffix}`;
const readerPassword = "reader-secret";
// The reader may not see the entryUUID of an entry marked hidden; everyone reads the rest.
const access = `access to filter=(description=hidden) attrs=entryUUID
  by dn.exact="${readerDn}" none
  by * read
access to *
  by * read`;

describe.runIf(wanted)("a Content Sync cycle with an entry it cannot map (slapd)", () => {
  let folder: string;
  let server: RunningSlapd;
  let admin: Client;
  const cleanups: (() => unknown)[] = [];
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "content-sync-cookie-"));
    server = await startSlapd(10, { access });
    admin = new Client({ url: server.url });
    await admin.bind(server.bindDn, server.password);
    await admin.add(readerDn, {
      objectClass: ["organizationalRole", "simpleSecurityObject"],
      cn: ["reader"],
      userPassword: [readerPassword],
    });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await admin?.unbind();
    server?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  const keptCookie = (state: string) => {
    const db = new DatabaseSync(state, { readOnly: true });
    try {
      const row = db.prepare("SELECT value FROM meta WHERE key = 'changeCookie'").get() as
        | { value: string }
        | undefined;
      return row && (JSON.parse(row.value) as { cookie: string }).cookie;
    } finally {
      db.close();
    }
  };

  it("keeps the cookie before it, reports it, and the change reaches the application later", async () => {
    const store = new SqliteUserStore(join(folder, "app.db"));
    cleanups.push(() => store.close());
    const handler = createProvisioningHandler({ store });
    const app = await serveFetchHandler((request) => handler.fetch(request));
    cleanups.push(() => app.close());
    const state = join(folder, `state-${randomUUID()}.sqlite`);
    const open = (bindDn: string, password: string) => {
      const sync = createDirectorySync({
        ldap: { url: server.url, bindDn, password },
        baseDn: server.peopleDn,
        target: app.url,
        state,
      });
      cleanups.push(() => sync.close());
      return sync;
    };
    // The state file is locked while a sync has it open: each is closed before it is read.
    let reader = open(readerDn, readerPassword);
    expect(await reader.syncOnce()).toMatchObject({ completed: true, created: 10 });
    expect(await reader.syncOnce()).toMatchObject({ completed: true, read: "full" });
    await reader.close();
    const before = keptCookie(state);
    expect(before).toBeDefined();

    const { searchEntries } = await admin.search(server.peopleDn, {
      filter: "(uid=user3)",
      attributes: ["entryUUID"],
    });
    const [{ dn, entryUUID }] = searchEntries as [{ dn: string; entryUUID: string }];
    await admin.modify(dn, [
      new Change({
        operation: "add",
        modification: new Attribute({ type: "description", values: ["hidden"] }),
      }),
      new Change({
        operation: "replace",
        modification: new Attribute({ type: "sn", values: ["Unseen"] }),
      }),
    ]);
    reader = open(readerDn, readerPassword);
    const skipped = await reader.syncOnce();
    await reader.close();
    expect(skipped).toMatchObject({
      read: "content-sync",
      skipped: 1,
      skippedEntries: [{ dn, reason: expect.stringMatching(/cookie stays before it/) }],
      modified: 0,
    });
    expect(keptCookie(state)).toBe(before);

    // An account that reads the entryUUID: the change is still ahead of the kept cookie.
    const root = open(server.bindDn, server.password);
    expect(await root.syncOnce()).toMatchObject({
      completed: true,
      read: "content-sync",
      modified: 1,
      skipped: 0,
    });
    await root.close();
    expect((await store.get(entryUUID))?.lastName).toBe("Unseen");
    expect(keptCookie(state)).not.toBe(before);
  }, 120_000);
});
