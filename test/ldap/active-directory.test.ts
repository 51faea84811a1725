// The directory sync against a real Active Directory: the Samba AD DC at PLATFORM_INTEGRATION_AD_URL,
// which .ci/steps/samba-ad.sh starts with a generated domain (test/support/samba-ad.ts). Without
// it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_AD=1 says it must run.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "ldapts";
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
  async function startApp() {
    const store = new MemoryUserStore();
    const handler = createProvisioningHandler({ store });
    const server = await serveFetchHandler((request) => handler.fetch(request));
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

  it("syncs every user over LDAPS with the domain's CA: objectGUID as PowerShell shows it", async () => {
    const app = await startApp();
    const sync = openSync({
      target: app.url,
      baseDn: `OU=Staff,${baseDn}`,
      filter: "(&(objectCategory=person)(objectClass=user))",
      usernameField: "sAMAccountName",
    });
    const report = await sync.syncOnce();
    expect(report).toMatchObject({ completed: true, created: generatedUsers.length, failed: 0 });
    expect(app.store.list().sort(byUuid)).toEqual(generatedUsers.map(expectedUser).sort(byUuid));
  });
});
