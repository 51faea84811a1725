// readInWorker without a directory: what it refuses at creation, and how a read that fails in the
// worker thread reaches the cycle (retryable or fatal, as in the delivery thread). The reads
// themselves are tested against a real slapd in slapd.test.ts, with either reader.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDirectorySync, type LdapSyncOptions } from "../../src/ldap/index.ts";
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
