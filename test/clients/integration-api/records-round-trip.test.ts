// Each Integration API record has one schema, shared by the client that reads it and the fake
// that serves it. These tests cross a real socket: the fake's wire form, read by the real client,
// is exactly the record the fake was built from; and the record's encoding gives that wire form
// back, byte for byte.
import { describe, expect, it } from "vitest";
import { createAuditClient } from "../../../src/clients/audit/index.ts";
import { createConsoleClient } from "../../../src/clients/console/index.ts";
import { identitySourceRecord } from "../../../src/clients/identity/identity-record.ts";
import { createIdentityClient } from "../../../src/clients/identity/index.ts";
import { Timestamp } from "../../../src/clients/integration-api/timestamp.ts";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import { licenseRecord } from "../../../src/clients/license/license-record.ts";
import { createVersionClient } from "../../../src/clients/version/index.ts";
import {
  currentVersionRecord,
  versionUpdateRecord,
} from "../../../src/clients/version/version-record.ts";
import { createFakeIntegrationApi } from "../../../src/testing/index.ts";
import { serveForEachTest } from "../../support/serve-fetch-handler.ts";

const serve = serveForEachTest();
const noRetry = { retry: { limit: 0 } } as const;

async function platform(options: Parameters<typeof createFakeIntegrationApi>[0] = {}) {
  const fake = createFakeIntegrationApi(options);
  const server = await serve((request) => fake.respond(request));
  const wire = async (path: string) => (await fetch(`${server.url}${path}`)).text();
  return { fake, baseUrl: server.url, wire };
}

describe("the Version API's records", () => {
  it("current: the client reads what the fake was built from, and encodes it back to the wire", async () => {
    const { fake, baseUrl, wire } = await platform({
      current: {
        version: "100",
        releaseSequence: 51,
        releaseNotes: "Notes",
        releaseDate: "2015-12-01T00:00:00.0000000Z",
        installDate: "2016-01-01T21:00:00.0000000Z",
      },
    });
    const current = await createVersionClient({
      api: "integration",
      baseUrl,
      ...noRetry,
    }).current();
    expect(current).toEqual({
      version: "100",
      releaseSequence: 51,
      releaseNotes: "Notes",
      releaseDate: Timestamp.parse("2015-12-01T00:00:00.0000000Z"),
      installDate: Timestamp.parse("2016-01-01T21:00:00.0000000Z"),
    });
    expect(current.releaseDate.text).toBe(fake.current.releaseDate);
    expect(JSON.stringify(currentVersionRecord.encode(current))).toBe(
      await wire("/version/v1/current"),
    );
  });

  it("updates: each pending update reads back as built, none set aside", async () => {
    const { fake, baseUrl, wire } = await platform({
      updates: [
        {
          version: "1.1",
          releaseSequence: 2,
          releaseNotes: "a",
          releaseDate: "2020-01-01T00:00:00Z",
        },
        { version: "1.2", releaseSequence: 3, releaseDate: "2020-02-01T00:00:00.1234567Z" },
      ],
    });
    const updates = await createVersionClient({
      api: "integration",
      baseUrl,
      ...noRetry,
    }).updates();
    expect(updates.invalid).toEqual([]);
    expect(updates).toEqual(
      fake.updates.map((update) => ({
        ...update,
        releaseDate: Timestamp.parse(update.releaseDate),
      })),
    );
    expect(JSON.stringify(updates.map((update) => versionUpdateRecord.encode(update)))).toBe(
      await wire("/version/v1/updates"),
    );
  });
});

describe("the License API's records", () => {
  it("license: every field, optional ones and dates included, reads back as built", async () => {
    const license = {
      licenseId: "L-1",
      installationId: "I-1",
      assignee: "Example Corp",
      releaseChannel: "Beta",
      expirationTime: "2030-01-01T00:00:00Z",
      billingFrequency: "monthly",
      billingBegin: "2024-01-01T00:00:00Z",
      billingEnd: "2031-01-01T00:00:00Z",
      fields: [
        { field: "max_users", title: "Max", type: "Integer", value: 10, hideFromCustomer: true },
        { field: "sso", title: "SSO", type: "Boolean", value: false, hideFromCustomer: false },
        { field: "note", title: "Note", type: "String", value: null, hideFromCustomer: false },
      ],
    };
    const { baseUrl, wire } = await platform({ license });
    const read = await createLicenseClient({ api: "integration", baseUrl, ...noRetry }).license();
    const served = await wire("/license/v1/license");
    expect(read).toEqual({
      ...license,
      expirationTime: Timestamp.parse(license.expirationTime),
      billingBegin: Timestamp.parse(license.billingBegin),
      billingEnd: Timestamp.parse(license.billingEnd),
      raw: JSON.parse(served),
    });
    const { raw: _, ...record } = read;
    expect(licenseRecord.encode(record)).toEqual(JSON.parse(served));
  });

  it("field: one field by name, its Integer value a string as the platform sends it", async () => {
    const { baseUrl } = await platform();
    const field = await createLicenseClient({ api: "integration", baseUrl, ...noRetry }).field(
      "max_users",
    );
    expect(field).toEqual({
      field: "max_users",
      value: "100",
      raw: { field: "max_users", value: "100" },
    });
  });
});

describe("the Identity API's records", () => {
  const identity = {
    sources: [
      { hostname: "ldap-a.test", baseDn: "dc=a,dc=test" },
      { hostname: "ldap-b.test", baseDn: "dc=b,dc=test" },
    ],
    groups: [
      { name: "admins", id: "7", dn: "cn=admins,dc=a,dc=test", attributes: { cn: ["admins"] } },
    ],
    users: [
      {
        username: "ann",
        password: "pw",
        dn: "uid=ann,dc=a,dc=test",
        attributes: { mail: ["ann@a.test"], cn: ["Ann", "Ann A."] },
        groups: ["admins"],
      },
    ],
  };

  it("sources: the enabled sources read back as built, and encode back to the wire", async () => {
    const { baseUrl, wire } = await platform({ identity });
    const sources = await createIdentityClient({ baseUrl, ...noRetry }).sources();
    expect(sources).toEqual(identity.sources);
    expect(JSON.parse(await wire("/identity/v1/sources"))).toEqual({
      sources: sources.map((source) => identitySourceRecord.encode(source)),
    });
  });

  it("login user and exists: the directory's user reads back as built, groups included", async () => {
    const { baseUrl } = await platform({ identity });
    const client = createIdentityClient({ baseUrl, ...noRetry });
    const source = identity.sources[0];
    const login = await client.login({ username: "ann", password: "pw" }, { source });
    const { password: _, groups: __, ...user } = identity.users[0] ?? { password: "", groups: [] };
    expect(login).toEqual({
      authenticated: true,
      user: {
        ...user,
        groups: identity.groups.map(({ name, id, dn, attributes }) => ({
          name,
          id,
          dn,
          attributes,
        })),
      },
    });
    expect(await client.user("ann", { source })).toEqual(login.authenticated && login.user);
    expect(await client.exists("ann", { source })).toBe(true);
    expect(await client.exists("nobody", { source })).toBe(false);
  });
});

describe("the Audit, Status and Console APIs' records", () => {
  it("audit event: what the client sends is what the fake received", async () => {
    const { fake, baseUrl } = await platform();
    const audit = createAuditClient({ baseUrl });
    const event = {
      action: "user.login.success",
      name: "user.login",
      title: "User Login",
      description: "ann logged in",
      ipAddress: "192.0.2.1",
    };
    await audit.send(event);
    await audit.close();
    expect(fake.auditEvents).toEqual([event]);
  });

  it("start-up status and console option: sent and read back as built", async () => {
    const { fake, baseUrl } = await platform({ consoleOptions: { hostname: "app.example.com" } });
    const client = createConsoleClient({ baseUrl, ...noRetry });
    await client.setStartupStatus("Importing users", "error");
    await client.setStartupStatus("Ready");
    expect(fake.console.startupStatuses).toEqual([
      { message: "Importing users", severity: "error" },
      { message: "Ready" },
    ]);
    expect(await client.option("hostname")).toBe("app.example.com");
  });
});
