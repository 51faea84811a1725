import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import { createVersionClient, Timestamp } from "../../../src/clients/version/index.ts";
import { createIntegrationApiHandlers, createSdkApiHandlers } from "../../../src/msw/index.ts";
import { createFakeIntegrationApi } from "../../../src/testing/fake-integration-api.ts";
import { createFakeSdkApi } from "../../../src/testing/fake-sdk-api.ts";

// The calls that map between the two APIs, run against each API's fake in-process and behind
// msw: the same results where the meaning is the same.

const integrationState = {
  current: {
    version: "1.4.0",
    releaseSequence: 40,
    releaseNotes: "Current notes",
    releaseDate: "2024-01-01T00:00:00.0000000Z",
    installDate: "2024-01-02T00:00:00.0000000Z",
  },
  updates: [
    {
      version: "1.5.0",
      releaseSequence: 41,
      releaseNotes: "Faster",
      releaseDate: "2024-02-01T00:00:00.0000000Z",
    },
  ],
  license: {
    licenseId: "license-1",
    installationId: "install-1",
    assignee: "Example Corp",
    releaseChannel: "Stable",
    fields: [{ field: "seat_count", title: "Seats", type: "Integer", value: 10 }],
    expirationTime: "2030-01-01T00:00:00Z",
  },
};

const sdkState = {
  current: {
    version: "1.4.0",
    releaseSequence: 40,
    releaseNotes: "Current notes",
    releaseDate: "2024-01-01T00:00:00Z",
    installDate: "2024-01-02T00:00:00Z",
  },
  updates: [{ version: "1.5.0", releaseNotes: "Faster", releaseDate: "2024-02-01T00:00:00Z" }],
  license: {
    licenseId: "license-1",
    customerName: "Example Corp",
    channelName: "Stable",
    licenseType: "prod",
    fields: [
      {
        name: "seat_count",
        title: "Seats",
        valueType: "Integer",
        value: 10,
        signature: { v2: "c2ln" },
      },
      {
        name: "expires_at",
        title: "Expiration",
        valueType: "String",
        value: "2030-01-01T00:00:00Z",
      },
    ],
  },
};

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

type Transport = "fake" | "msw";
const transports: Transport[] = ["fake", "msw"];

function integration(transport: Transport) {
  const baseUrl = "https://platform.test";
  if (transport === "fake") {
    const api = createFakeIntegrationApi(integrationState);
    return { baseUrl, fetch: api.fetch };
  }
  server.use(...createIntegrationApiHandlers({ baseUrl, ...integrationState }).handlers);
  return { baseUrl };
}

function sdk(transport: Transport) {
  const baseUrl = "http://replicated.test:3000";
  if (transport === "fake") {
    const api = createFakeSdkApi(sdkState);
    return { baseUrl, fetch: api.fetch };
  }
  server.use(...createSdkApiHandlers({ baseUrl, ...sdkState }).handlers);
  return { baseUrl };
}

describe.each(transports)("mapped calls through the %s", (transport) => {
  it("current(): the same version, sequence, notes and dates on both APIs", async () => {
    const legacy = await createVersionClient({
      api: "integration",
      ...integration(transport),
    }).current();
    const newer = await createVersionClient({ api: "sdk", ...sdk(transport) }).current();
    for (const current of [legacy, newer]) {
      expect(current).toMatchObject({
        version: "1.4.0",
        releaseSequence: 40,
        releaseNotes: "Current notes",
      });
      expect(current.releaseDate?.equals(Timestamp.parse("2024-01-01T00:00:00Z"))).toBe(true);
      expect(current.installDate?.equals(Timestamp.parse("2024-01-02T00:00:00Z"))).toBe(true);
    }
    expect(newer.extra).toMatchObject({ appSlug: "fake-app", channelName: "Stable" });
  });

  it("updates(): the same versions and notes; only the Integration API's carry a sequence", async () => {
    const legacy = await createVersionClient({
      api: "integration",
      ...integration(transport),
    }).updates();
    const newer = await createVersionClient({ api: "sdk", ...sdk(transport) }).updates();
    expect(legacy.map(({ version, releaseNotes }) => ({ version, releaseNotes }))).toEqual([
      { version: "1.5.0", releaseNotes: "Faster" },
    ]);
    expect(newer).toEqual([
      {
        version: "1.5.0",
        releaseNotes: "Faster",
        releaseDate: Timestamp.parse("2024-02-01T00:00:00Z"),
      },
    ]);
    expect(legacy[0]?.releaseSequence).toBe(41);
    expect(newer[0]?.releaseSequence).toBeUndefined();
    expect([legacy.fromCache, newer.fromCache]).toEqual([false, false]);
  });

  it("license(): the same id, customer, channel, expiry and fields on both APIs", async () => {
    const legacy = await createLicenseClient({
      api: "integration",
      ...integration(transport),
    }).license();
    const newer = await createLicenseClient({ api: "sdk", ...sdk(transport) }).license();
    for (const license of [legacy, newer]) {
      expect(license).toMatchObject({
        licenseId: "license-1",
        assignee: "Example Corp",
        releaseChannel: "Stable",
      });
      expect(license.expirationTime?.equals(Timestamp.parse("2030-01-01T00:00:00Z"))).toBe(true);
      expect(license.fields.find((field) => field.field === "seat_count")).toMatchObject({
        title: "Seats",
        type: "Integer",
        value: 10,
        hideFromCustomer: false,
      });
    }
    expect(legacy.installationId).toBe("install-1");
    expect(newer).toMatchObject({ licenseType: "prod", fromCache: false });
    expect(newer.fields[0]?.signature).toEqual({ v2: "c2ln" });
  });

  it("field(): the value by name (typed on the newer API), undefined for an unknown field", async () => {
    const legacy = createLicenseClient({ api: "integration", ...integration(transport) });
    const newer = createLicenseClient({ api: "sdk", ...sdk(transport) });
    expect(await legacy.field("seat_count")).toMatchObject({ field: "seat_count", value: "10" });
    expect(await newer.field("seat_count")).toMatchObject({
      field: "seat_count",
      value: 10,
      type: "Integer",
      signature: { v2: "c2ln" },
      fromCache: false,
    });
    expect(await legacy.field("nope")).toBeUndefined();
    expect(await newer.field("nope")).toBeUndefined();
  });

  it("the admin console's license endpoint (kots): the legacy shape, the field from the whole license", async () => {
    const client = createLicenseClient({ api: "kots", ...sdk(transport) });
    const license = await client.license();
    expect(license).toMatchObject({
      licenseId: "license-1",
      installationId: "fake-kots-app-id",
      assignee: "Example Corp",
      licenseType: "prod",
    });
    expect(license.expirationTime?.text).toBe("2030-01-01T00:00:00Z");
    expect(license.fields.map((field) => field.field)).toEqual(["seat_count"]);
    expect(await client.field("seat_count")).toMatchObject({ field: "seat_count", value: 10 });
    expect(await client.field("nope")).toBeUndefined();
  });
});
