// readInWorker without a directory: what it refuses at creation, how a read that fails in the
// worker thread reaches the cycle (retryable or fatal, as in the delivery thread), and a thread
// that cannot run at all. The reads
// themselves are tested against a real slapd in slapd.test.ts, with either reader.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDirectorySync, DirectoryError, type LdapSyncOptions } from "../../src/ldap/index.ts";
import { defaultMapping, type PortableMapping, toPortableMapping } from "../../src/ldap/mapping.ts";
import { pagesFromWorker } from "../../src/ldap/read-worker.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../src/provisioning/index.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";

const folder = mkdtempSync(join(tmpdir(), "read-worker-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const options = (extra: Partial<LdapSyncOptions>): LdapSyncOptions => ({
  ldap: { url: "ldap://127.0.0.1:1", bindDn: "cn=reader", password: "a-bind-secret" },
  baseDn: "ou=people,dc=example,dc=com",
  target: "http://127.0.0.1:1",
  state: join(folder, `${Math.random()}.sqlite`),
  readInWorker: true,
  ...extra,
});

describe("readInWorker", () => {
  it("refuses a mapping function of the caller's at creation, naming the field and the fix", () => {
    expect(() =>
      createDirectorySync(options({ mapping: { email: (entry) => entry.first("mail") } })),
    ).toThrow(
      new TypeError(
        "readInWorker cannot take the mapping function of email: functions do not cross to a " +
          "thread. Map it by an attribute's name, or leave readInWorker off.",
      ),
    );
  });

  it("refuses TLS options holding a function at creation, without the password", () => {
    const create = () =>
      createDirectorySync(
        options({
          ldap: {
            url: "ldaps://127.0.0.1:1",
            password: "a-bind-secret",
            tls: { checkServerIdentity: () => undefined },
          },
        }),
      );
    expect(create).toThrow(TypeError);
    expect(create).toThrow(/a function in ldap.tls\?/);
    expect(create).not.toThrow(/a-bind-secret/);
  });

  it("takes the default mapping and attribute names, and leaves them working in the thread", async () => {
    const app = await serveFetchHandler(
      createProvisioningHandler({ store: new MemoryUserStore() }).fetch,
    );
    const sync = createDirectorySync(
      options({ target: app.url, mapping: { userId: "employeeNumber" } }),
    );
    try {
      // Nothing listens on port 1: the worker's read fails as the delivery thread's would.
      const report = await sync.syncOnce();
      expect(report).toMatchObject({ completed: false, failed: 1 });
      expect(report.directoryError).toMatch(/^LDAP ldap:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
      expect(report.directoryError).not.toContain("a-bind-secret");
    } finally {
      await sync.close();
      await app.close();
    }
  });

  it("keeps a failure that retrying cannot fix fatal across the thread", async () => {
    const app = await serveFetchHandler(
      createProvisioningHandler({ store: new MemoryUserStore() }).fetch,
    );
    const sync = createDirectorySync(options({ target: app.url, filter: "(uid=a" }));
    try {
      await expect(sync.syncOnce()).rejects.toMatchObject({
        name: "DirectoryError",
        fatal: true,
        message: expect.stringMatching(/^The filter \(uid=a is invalid/),
      });
    } finally {
      await sync.close();
      await app.close();
    }
  });
});

// A thread of its own that cannot run stops the cycle for good: it would fail again each cycle.
describe("a read worker thread that cannot run", () => {
  const request = {
    "platform-integration/ldap read worker": true as const,
    source: {
      ldap: { url: "ldap://127.0.0.1:1" },
      baseDn: "ou=people,dc=example,dc=com",
      filter: "(objectClass=person)",
      mapping: toPortableMapping(defaultMapping()) as PortableMapping,
      passwords: false,
    },
    uuidsOnly: false,
  };
  const read = async (workerModule: string) => {
    const entry = new URL(`data:text/javascript,${encodeURIComponent(workerModule)}`);
    for await (const _ of pagesFromWorker(request, undefined, entry)) {
      throw new Error("no page was expected");
    }
  };

  it.each([
    ["fails to load", "throw new Error('its module failed')", /failed \(its module failed\)/],
    ["exits before the read ends", "process.exit(3)", /exited with 3 before the read ended/],
    ["ends without a word", "", /exited with 0 before the read ended/],
  ])(
    "ends the read with a fatal error when it %s, saying to leave readInWorker off",
    async (_, workerModule, what) => {
      const error = await read(workerModule).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(DirectoryError);
      expect(error).toMatchObject({ fatal: true });
      expect((error as Error).message).toMatch(what);
      expect((error as Error).message).toMatch(/leave readInWorker off$/);
    },
  );
});
