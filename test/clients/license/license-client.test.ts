import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  createLicenseClient,
  isHttpError,
  isResponseShapeError,
  Timestamp,
} from "../../../src/clients/license/index.ts";
import { createIntegrationApiHandlers } from "../../../src/msw/index.ts";
import { type FakeLicense, fakeLicenseDefault } from "../../../src/testing/index.ts";
import { useMswServer } from "../integration-api/msw-server.ts";

const baseUrl = "https://platform.test";
const server = useMswServer();
const client = () =>
  createLicenseClient({ api: "integration", baseUrl, retry: { limit: 2, baseDelayMs: 0 } });

function platform(license?: FakeLicense) {
  const { handlers, api } = createIntegrationApiHandlers({
    baseUrl,
    ...(license === undefined ? {} : { license }),
  });
  server.use(...handlers);
  return api;
}

const documented = {
  license_id: "lic-1",
  installation_id: "inst-1",
  assignee: "Acme Corp",
  release_channel: "Stable",
  fields: [
    {
      field: "max_queues",
      title: "Max queues",
      type: "Integer",
      value: 99,
      hide_from_customer: false,
    },
    { field: "tier", title: "Tier", type: "String", value: "gold", hide_from_customer: true },
  ],
  expiration_time: "2030-01-01T00:00:00Z",
  billing_frequency: "monthly",
  billing_begin: "2024-01-01T00:00:00Z",
};

function answer(path: string, body: string) {
  server.use(http.get(`${baseUrl}${path}`, () => new HttpResponse(body)));
}

describe("license()", () => {
  it("types the documented fields, dates as lossless Timestamps, and keeps the raw body", async () => {
    answer("/license/v1/license", JSON.stringify({ ...documented, seats_note: "extra" }));
    const license = await client().license();
    expect(license).toEqual({
      licenseId: "lic-1",
      installationId: "inst-1",
      assignee: "Acme Corp",
      releaseChannel: "Stable",
      fields: [
        {
          field: "max_queues",
          title: "Max queues",
          type: "Integer",
          value: 99,
          hideFromCustomer: false,
        },
        { field: "tier", title: "Tier", type: "String", value: "gold", hideFromCustomer: true },
      ],
      expirationTime: Timestamp.parse("2030-01-01T00:00:00Z"),
      billingFrequency: "monthly",
      billingBegin: Timestamp.parse("2024-01-01T00:00:00Z"),
      raw: { ...documented, seats_note: "extra" },
    });
    expect(license.billingEnd).toBeUndefined();
    expect(license.expirationTime?.text).toBe("2030-01-01T00:00:00Z");
  });

  it("leaves out optional fields that are absent or null", async () => {
    answer(
      "/license/v1/license",
      '{"license_id":"a","installation_id":"b","fields":[],"expiration_time":null}',
    );
    const license = await client().license();
    expect(Object.keys(license).sort()).toEqual(["fields", "installationId", "licenseId", "raw"]);
  });

  it("fails loudly on a malformed expiration date rather than reading it as no expiry", async () => {
    for (const body of [
      { ...documented, expiration_time: "next year" },
      { ...documented, expiration_time: 2030 },
      { ...documented, fields: undefined },
      { ...documented, license_id: 1 },
      { ...documented, fields: [{ field: "x", value: { nested: true } }] },
    ]) {
      answer("/license/v1/license", JSON.stringify(body));
      const error = await client()
        .license()
        .catch((caught: unknown) => caught);
      expect(isResponseShapeError(error), JSON.stringify(body)).toBe(true);
    }
  });

  it("serves the fake's default license", async () => {
    platform();
    const license = await client().license();
    expect(license.fields).toEqual([
      {
        field: "max_users",
        title: "Maximum users",
        type: "Integer",
        value: 100,
        hideFromCustomer: false,
      },
    ]);
    expect(license.licenseId).toBe(fakeLicenseDefault.licenseId);
  });
});

describe("field()", () => {
  it("returns one field with its value as the platform sent it (a string for an Integer)", async () => {
    platform({ ...fakeLicenseDefault, fields: [{ field: "max_queues", value: 99 }] });
    expect(await client().field("max_queues")).toEqual({
      field: "max_queues",
      value: "99",
      raw: { field: "max_queues", value: "99" },
    });
  });

  it("returns undefined on 404, retries a 503, and encodes the name", async () => {
    const api = platform();
    expect(await client().field("missing")).toBeUndefined();
    api.failNext(1, { status: 503 });
    expect((await client().field("max_users"))?.value).toBe("100");
    await expect(client().field("..")).rejects.toThrow(RangeError);
  });

  it("throws an HttpError for any other failure", async () => {
    const api = platform();
    api.failNext(3, { status: 500 });
    const error = await client()
      .field("max_users")
      .catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.attempts).toBe(3);
  });
});
