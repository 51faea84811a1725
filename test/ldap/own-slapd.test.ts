// The directory sync against throwaway slapd servers of its own (test/support/slapd.ts), for what
// the shared server does not serve: uuid mappings other than the default, binary attributes,
// StartTLS and LDAPS with a CA, an account held to a size limit on paged reads. Skipped where
// slapd is not installed, unless PLATFORM_INTEGRATION_REQUIRE_LDAP=1 says it must run.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client } from "ldapts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDirectorySync,
  type DirectorySync,
  fromAttributes,
  type LdapSyncOptions,
} from "../../src/ldap/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../src/provisioning/index.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { activeDirectoryEntry, startSlapd } from "../support/slapd.ts";

const installed = existsSync("/usr/sbin/slapd");
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_LDAP === "1";
const cli = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const startServer = serveForEachTest();

describe.runIf(installed || required)("directory sync against slapd servers of its own", () => {
  let folder: string;
  const cleanups: (() => unknown)[] = [];
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), "own-slapd-"));
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  async function server(people: number, options: Parameters<typeof startSlapd>[1] = {}) {
    const running = await startSlapd(people, options);
    cleanups.push(() => running.stop());
    const admin = new Client({ url: running.url });
    if (options.tls) await admin.startTLS({ ca: running.ca as string });
    await admin.bind(running.bindDn, running.password);
    cleanups.push(() => admin.unbind());
    return { ...running, admin };
  }

  async function application() {
    const store = new MemoryUserStore();
    const handler = createProvisioningHandler({ store });
    const paths: string[] = [];
    const { url } = await startServer((request) => {
      paths.push(`${request.method} ${new URL(request.url).pathname}`);
      return handler.fetch(request);
    });
    return { url, store, paths };
  }

  function open(options: Omit<LdapSyncOptions, "state"> & { state?: string }): DirectorySync {
    const sync = createDirectorySync({
      state: join(folder, `state-${randomUUID()}.sqlite`),
      ...options,
    });
    cleanups.push(() => sync.close());
    return sync;
  }

  describe("uuid mappings other than the default", () => {
    const byEmployeeNumberOrEntryUuid = (entry: { first(name: string): string | undefined }) =>
      entry.first("employeeNumber") ?? entry.first("entryUUID");
    it.each([
      { name: "an attribute's name", uuid: "employeeNumber" as const, fallback: false },
      {
        name: "a function with a fallback, its attributes declared",
        uuid: fromAttributes(["employeeNumber", "entryUUID"], byEmployeeNumberOrEntryUuid),
        fallback: true,
      },
      {
        name: "a function with a fallback, undeclared (every attribute is read)",
        uuid: byEmployeeNumberOrEntryUuid,
        fallback: true,
      },
    ])("$name: update cycles neither stall nor churn", async ({ uuid, fallback }) => {
      const slapd = await server(12);
      // One person without an employeeNumber: the fallback maps it by its entryUUID.
      await slapd.admin.modify(`uid=user3,${slapd.peopleDn}`, [
        new Change({
          operation: "delete",
          modification: new Attribute({ type: "employeeNumber" }),
        }),
      ]);
      const app = await application();
      const sync = open({
        ldap: { url: slapd.url, bindDn: slapd.bindDn, password: slapd.password },
        baseDn: slapd.peopleDn,
        target: app.url,
        mapping: { uuid },
      });
      const held = fallback ? 12 : 11;
      expect(await sync.syncOnce()).toMatchObject({
        completed: true,
        created: held,
        skipped: fallback ? 0 : 1,
      });
      const uuids = (await app.store.list()).map((user) => user.uuid);
      expect(uuids).toContain("100000");
      for (let cycle = 0; cycle < 2; cycle++) {
        app.paths.length = 0;
        expect(await sync.syncOnce()).toMatchObject({
          completed: true,
          deleted: 0,
          created: 0,
          unchanged: held,
        });
        expect(app.paths).toEqual(["GET /v1/ping"]);
      }
      // A deletion is still found by the read of uuids alone.
      await slapd.admin.del(`uid=user7,${slapd.peopleDn}`);
      expect(await sync.syncOnce()).toMatchObject({ completed: true, deleted: 1 });
      expect(app.paths.at(-1)).toBe("DELETE /v1/user/100007");
    });
  });

  describe("binary attributes", () => {
    it("maps objectGUID by name as AD's GUID string, never as text, for values UTF-8 would confuse", async () => {
      const slapd = await server(0);
      const base = `ou=ad,${slapd.suffix}`;
      // Two GUIDs that differ only in bytes that are not UTF-8 (decoded as text, both would give
      // the same string), and one that is valid UTF-8 and starts with a byte order mark.
      const guids = [
        Buffer.from("ff00112233445566778899aabbccddee", "hex"),
        Buffer.from("fe00112233445566778899aabbccddee", "hex"),
        Buffer.from("efbbbf41424344454647484950515253", "hex"),
      ];
      for (const [index, bytes] of guids.entries()) {
        await slapd.admin.add(`cn=guid${index},${base}`, [
          new Attribute({ type: "objectClass", values: ["inetOrgPerson", "extensibleObject"] }),
          new Attribute({ type: "cn", values: [`guid${index}`] }),
          new Attribute({ type: "sn", values: ["Binary"] }),
          new Attribute({ type: "sAMAccountName", values: [`guid${index}`] }),
          new Attribute({ type: "objectGUID", values: [bytes] }),
        ]);
      }
      const app = await application();
      for (const uuid of ["objectGUID", "objectguid"]) {
        await app.store.reset();
        const sync = open({
          ldap: { url: slapd.url, bindDn: slapd.bindDn, password: slapd.password },
          baseDn: base,
          filter: "(sAMAccountName=*)",
          target: app.url,
          usernameField: "sAMAccountName",
          mapping: { uuid },
        });
        expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 4 });
        expect((await app.store.list()).map((user) => user.uuid).sort()).toEqual(
          [
            activeDirectoryEntry.guid,
            "221100ff-4433-6655-7788-99aabbccddee",
            "221100fe-4433-6655-7788-99aabbccddee",
            "41bfbbef-4342-4544-4647-484950515253",
          ].sort(),
        );
      }
    });
  });

  describe("StartTLS and LDAPS with a CA", () => {
    it("connects with StartTLS over the plain port, the CA given as the library's option", async () => {
      const slapd = await server(3, { tls: true });
      const app = await application();
      const sync = open({
        ldap: {
          url: slapd.url,
          bindDn: slapd.bindDn,
          password: slapd.password,
          startTls: true,
          tls: { ca: slapd.ca as string },
        },
        baseDn: slapd.peopleDn,
        target: app.url,
      });
      expect(await sync.syncOnce()).toMatchObject({ completed: true, created: 3 });
      // The update cycle reconnects for its reads and Content Sync: the same upgrade each time.
      expect(await sync.syncOnce()).toMatchObject({ completed: true, unchanged: 3 });
    });

    it("sync --start-tls --ldap-ca connects, in a process of its own", async () => {
      const slapd = await server(2, { tls: true });
      const app = await application();
      const ca = join(folder, `ca-${randomUUID()}.pem`);
      writeFileSync(ca, slapd.ca as string);
      const child = spawn(
        process.execPath,
        [
          "--disable-warning=ExperimentalWarning",
          cli,
          "sync",
          app.url,
          ...["--ldap-url", slapd.url, "--start-tls", "--ldap-ca", ca],
          ...["--bind-dn", slapd.bindDn, "--base-dn", slapd.peopleDn, "--once", "--json"],
          ...["--state", join(folder, `cli-${randomUUID()}.sqlite`)],
        ],
        {
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, LDAP_BIND_PASSWORD: slapd.password },
        },
      );
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      const [code] = await once(child, "exit");
      expect(JSON.parse(out)).toMatchObject({ completed: true, created: 2 });
      expect(code).toBe(0);
    });

    it("stops once, fatally, with the right fix for each TLS failure retrying cannot fix", async () => {
      const slapd = await server(1, { tls: true });
      const plain = await server(1);
      const app = await application();
      const ldap = { bindDn: slapd.bindDn, password: slapd.password };
      const failure = async (options: LdapSyncOptions["ldap"], base = slapd.peopleDn) => {
        const sync = open({ ldap: options, baseDn: base, target: app.url });
        const error = await sync.syncOnce().catch((caught: Error) => caught);
        expect(error).toMatchObject({ name: "DirectoryError", fatal: true });
        return (error as Error).message;
      };
      // No CA: the fix is to pass it.
      expect(await failure({ ...ldap, url: slapd.url, startTls: true })).toMatch(
        /certificate is not trusted .*pass its CA \(ldap\.tls\.ca, --ldap-ca FILE\)/,
      );
      // The CA, but a name the certificate does not hold: not "pass the CA".
      const mismatch = await failure({
        ...ldap,
        url: slapd.url,
        startTls: true,
        tls: { ca: slapd.ca as string, servername: "ldap.elsewhere.example" },
      });
      expect(mismatch).toMatch(/certificate does not name/);
      expect(mismatch).not.toMatch(/pass its CA/);
      // Another CA than the one that issued the certificate.
      expect(
        await failure({ ...ldap, url: slapd.url, startTls: true, tls: { ca: await otherCa() } }),
      ).toMatch(/not issued by the CA given/);
      // ldaps:// to the plain port.
      expect(
        await failure({
          ...ldap,
          url: slapd.url.replace("ldap:", "ldaps:"),
          tls: { ca: slapd.ca as string },
        }),
      ).toMatch(/ldap:\/\/ with startTls/);
      // StartTLS against a server without a certificate.
      expect(
        await failure(
          { bindDn: plain.bindDn, password: plain.password, url: plain.url, startTls: true },
          plain.peopleDn,
        ),
      ).toMatch(/refused StartTLS/);
      // Under an interval: the first cycle rejects, and no other runs.
      const sync = open({
        ldap: { ...ldap, url: slapd.url, startTls: true },
        baseDn: slapd.peopleDn,
        target: app.url,
      });
      const cycles: unknown[] = [];
      await expect(
        sync.run({ intervalMs: 1, onCycle: (report) => cycles.push(report) }),
      ).rejects.toMatchObject({ fatal: true });
      expect(cycles).toEqual([]);
    });

    it("refuses startTls with an ldaps:// URL at creation", () => {
      expect(() =>
        createDirectorySync({
          ldap: { url: "ldaps://127.0.0.1:1", startTls: true },
          baseDn: "dc=example",
          target: "http://127.0.0.1:1",
          state: ":memory:",
        }),
      ).toThrow(/startTls upgrades an ldap:\/\/ connection/);
    });

    // Catches: an LDAP URL's user:password or query kept raw in the state file and repeated by
    // StateMismatchError, though ldapts never binds with them.
    it.each([
      "ldap://admin:S3cretPW@127.0.0.1:1",
      "ldap://127.0.0.1:1/??sub?(objectClass=*)?x-bindpw=S3cretPW",
      "ldap://127.0.0.1:1/?token=S3cretPW",
      "ldaps://admin:ab/S3cretPW@127.0.0.1:1",
    ])("refuses the LDAP URL %s at creation, without repeating its secret", (url) => {
      let error: unknown;
      try {
        createDirectorySync({
          ldap: { url },
          baseDn: "dc=example",
          target: "http://127.0.0.1:1",
          state: ":memory:",
        });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toMatch(
        /ldap.url must not carry a user name, a password or a query .*ldap.bindDn and ldap.password/,
      );
      expect(String(error)).not.toMatch(/S3cret|admin/);
    });
  });

  describe("the sync command", () => {
    it("ends a cycle under --interval on SIGTERM, says so, and exits 0; the next run resumes", async () => {
      const slapd = await server(4);
      const store = new MemoryUserStore();
      const handler = createProvisioningHandler({ store });
      let creates = 0;
      let child: ReturnType<typeof spawn> | undefined;
      const { url } = await startServer(async (request) => {
        if (new URL(request.url).pathname === "/v1/user/create" && ++creates === 2) {
          child?.kill("SIGTERM");
        }
        return handler.fetch(request);
      });
      const state = join(folder, `sigterm-${randomUUID()}.sqlite`);
      const run = async (extra: string[]) => {
        child = spawn(
          process.execPath,
          [
            "--disable-warning=ExperimentalWarning",
            cli,
            "sync",
            url,
            ...["--ldap-url", slapd.url, "--bind-dn", slapd.bindDn, "--base-dn", slapd.peopleDn],
            ...["--state", state, ...extra],
          ],
          {
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, LDAP_BIND_PASSWORD: slapd.password },
          },
        );
        let out = "";
        child.stdout?.on("data", (chunk) => {
          out += chunk;
        });
        const [code] = await once(child, "exit");
        return { code, out };
      };
      const stopped = await run(["--interval", "1h"]);
      expect(stopped.out).toMatch(/Stopped on request \(received SIGTERM\)/);
      expect(stopped.out).toMatch(/the next run resumes there/);
      expect(stopped.code).toBe(0);
      const resumed = await run(["--once", "--json"]);
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.out)).toMatchObject({ completed: true });
      expect(await store.list()).toHaveLength(4);
    });
  });

  describe("the sync command in-process", () => {
    it("maps --uuid-field, lists refusals, and holds deletes at --max-deletes until --allow-deletes", async () => {
      const { run } = await import("../../src/cli/run.ts");
      const { createFakeIo } = await import("../support/fake-io.ts");
      const slapd = await server(4);
      const store = new MemoryUserStore();
      const handler = createProvisioningHandler({ store });
      let refusing = "100002";
      const { url } = await startServer(async (request) => {
        if (request.method === "POST") {
          const body = (await request.clone().json()) as { uuid: string };
          if (body.uuid === refusing) {
            return Response.json({ error: "employee on hold" }, { status: 422 });
          }
        }
        return handler.fetch(request);
      });
      const state = join(folder, `cli-guard-${randomUUID()}.sqlite`);
      const sync = async (extra: string[]) => {
        const io = createFakeIo();
        io.env.LDAP_BIND_PASSWORD = slapd.password;
        const argv = [
          "sync",
          url,
          ...["--ldap-url", slapd.url, "--bind-dn", slapd.bindDn, "--base-dn", slapd.peopleDn],
          ...["--state", state, "--uuid-field", "employeeNumber", "--once", ...extra],
        ];
        return { code: await run(argv, io), out: io.out };
      };
      const first = await sync([]);
      expect(first.out).toMatch(/1 messages refused by the application, held for the next cycle/);
      expect(first.out).toMatch(
        /create 100002 \(attempt 1\): status 422 \{"error":"employee on hold"\}/,
      );
      expect(first.code).toBe(1);
      expect((await store.list()).map((user) => user.uuid).sort()).toEqual([
        "100000",
        "100001",
        "100003",
      ]);
      refusing = "";
      expect((await sync([])).code).toBe(0);
      for (const uid of ["user0", "user1"]) await slapd.admin.del(`uid=${uid},${slapd.peopleDn}`);
      const guarded = await sync(["--max-deletes", "1"]);
      expect(guarded.out).toMatch(
        /would delete 2 of the 4 users .*more than 1: no delete was sent/,
      );
      expect(guarded.out).toMatch(/sync --allow-deletes 2/);
      expect(guarded.code).toBe(1);
      expect(await store.list()).toHaveLength(4);
      const allowed = await sync(["--max-deletes", "1", "--allow-deletes", "2"]);
      expect(allowed.code).toBe(0);
      expect((await store.list()).map((user) => user.uuid).sort()).toEqual(["100002", "100003"]);
    });
  });

  describe("an account held to a size limit on paged reads", () => {
    it("stops once with each directory's fix instead of a result code", async () => {
      const slapd = await server(8, { sizeLimit: 5, pagedSizeLimit: true });
      const app = await application();
      const reader = `uid=user20,${slapd.peopleDn}`;
      await slapd.admin.add(reader, {
        objectClass: ["inetOrgPerson"],
        uid: ["user20"],
        cn: ["Reader"],
        sn: ["Reader"],
        userPassword: ["reader-secret"],
      });
      const sync = open({
        ldap: { url: slapd.url, bindDn: reader, password: "reader-secret" },
        baseDn: slapd.peopleDn,
        target: app.url,
        pageSize: 2,
      });
      const error = await sync.syncOnce().catch((caught: Error) => caught);
      expect(error).toMatchObject({ name: "DirectoryError", fatal: true });
      const message = (error as Error).message;
      expect(message).toMatch(/size limit/);
      expect(message).toMatch(/limits dn\.exact="<bind DN>" size=unlimited/);
      expect(message).toMatch(/nsSizeLimit/);
      expect(message).toMatch(/MaxPageSize/);
      expect(message).not.toMatch(/Code: 0x4/);
    });
  });
});

/** A CA that issued nothing slapd serves. */
async function otherCa(): Promise<string> {
  const { createSelfSignedCertificate } = await import("../../src/cli/self-signed-certificate.ts");
  return (await createSelfSignedCertificate()).cert;
}
