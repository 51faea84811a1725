import { afterEach, describe, expect, it, vi } from "vitest";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import {
  createVersionClient,
  isConfigurationError,
  isPlatformApiError,
  isResponseShapeError,
  isUnsupportedOperationError,
  UnsupportedOperationError,
} from "../../../src/clients/version/index.ts";
import { createFakeSdkApi } from "../../../src/testing/fake-sdk-api.ts";

const baseUrl = "http://replicated.test:3000";
afterEach(() => vi.unstubAllEnvs());

describe("a call the selected API cannot serve", () => {
  it("apply() on the newer API rejects at once, without a request, naming the API and the alternative", async () => {
    const fake = createFakeSdkApi({ updates: [{ version: "2.0.0" }] });
    const version = createVersionClient({ api: "sdk", baseUrl, fetch: fake.fetch });
    expect(version.capabilities.apply).toBe(false);
    const error = await version.apply(2).catch((caught: unknown) => caught);
    expect(isUnsupportedOperationError(error)).toBe(true);
    expect(isPlatformApiError(error)).toBe(true);
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error).toMatchObject({
      api: "sdk",
      operation: "version.apply",
      retryable: false,
      requestSent: false,
    });
    expect((error as Error).message).toMatch(/newer in-cluster SDK API.*helm upgrade/);
    expect(fake.requests).toEqual([]);
  });

  it("the kots endpoint serves the license only: version calls reject without a request", async () => {
    const fake = createFakeSdkApi();
    const version = createVersionClient({ api: "kots", baseUrl, fetch: fake.fetch });
    for (const call of [() => version.current(), () => version.updates(), () => version.apply(1)]) {
      await expect(call()).rejects.toSatisfy(isUnsupportedOperationError);
    }
    const errors: unknown[] = [];
    for await (const _ of version.watchUpdates({ intervalMs: 1, onError: (e) => errors.push(e) })) {
      expect.unreachable();
    }
    expect(errors).toHaveLength(1);
    expect(fake.requests).toEqual([]);
    expect(version.capabilities).toMatchObject({ currentVersion: false, license: true });
  });

  it("capabilities tell the APIs apart", () => {
    const integration = createVersionClient({ api: "integration", baseUrl });
    const sdk = createLicenseClient({ api: "sdk", baseUrl });
    expect(integration.capabilities).toMatchObject({
      apply: true,
      audit: true,
      customMetrics: false,
    });
    expect(sdk.capabilities).toMatchObject({
      apply: false,
      audit: false,
      identity: false,
      signedLicenseFields: true,
      customMetrics: true,
      instanceTags: true,
      appStatus: true,
      history: true,
      supportBundle: true,
    });
    expect(Object.isFrozen(sdk.capabilities)).toBe(true);
  });
});

describe("the newer API's pending updates", () => {
  // The types say so too: differences.test-d.ts.
  it("carry no release sequence", async () => {
    const fake = createFakeSdkApi({ updates: [{ version: "2.0.0" }] });
    const version = createVersionClient({ api: "sdk", baseUrl, fetch: fake.fetch });
    const [update] = await version.updates();
    expect(update).toBeDefined();
    expect(update && "releaseSequence" in update).toBe(false);
    if (update !== undefined) {
      // @ts-expect-error: an update of the newer API has no sequence to apply.
      await version.apply(update.releaseSequence).catch(() => {});
    }
  });

  it("are [] in an air gap, however many the vendor has", async () => {
    const fake = createFakeSdkApi({ updates: [{ version: "2.0.0" }], airgap: true });
    const version = createVersionClient({ api: "sdk", baseUrl, fetch: fake.fetch });
    const updates = await version.updates();
    expect([...updates]).toEqual([]);
    expect(updates.invalid).toEqual([]);
  });

  it("are marked fromCache when the service served its last copy", async () => {
    const fake = createFakeSdkApi({ updates: [{ version: "2.0.0" }], servedFromCache: true });
    const version = createVersionClient({ api: "sdk", baseUrl, fetch: fake.fetch });
    expect((await version.updates()).fromCache).toBe(true);
    fake.setMode({ servedFromCache: false });
    expect((await version.updates()).fromCache).toBe(false);
  });

  it("set aside an item that cannot be read, keeping the others", async () => {
    const fetch = async () =>
      Response.json([
        { versionLabel: "2.0.0", createdAt: "2024-01-01T00:00:00Z" },
        { createdAt: 5 },
      ]);
    const updates = await createVersionClient({ api: "sdk", baseUrl, fetch }).updates();
    expect(updates.map((update) => update.version)).toEqual(["2.0.0"]);
    expect(updates.invalid).toMatchObject([{ index: 1, raw: { createdAt: 5 } }]);
  });
});

describe("the newer API's records", () => {
  it("current(): a sequence of -1 (not injected) and an empty deployedAt are left out", async () => {
    const fake = createFakeSdkApi({ current: { version: "3.0.0", releaseSequence: -1 } });
    const current = await createVersionClient({ api: "sdk", baseUrl, fetch: fake.fetch }).current();
    expect(current.version).toBe("3.0.0");
    expect("releaseSequence" in current).toBe(false);
    expect("installDate" in current).toBe(false);
  });

  it("a body that does not match the schema is a ResponseShapeError naming the field", async () => {
    const fetch = async () => Response.json({ currentRelease: { versionLabel: 7 } });
    const error = await createVersionClient({ api: "sdk", baseUrl, fetch, retry: { limit: 0 } })
      .current()
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
    expect((error as Error).message).toContain("currentRelease.versionLabel");
  });

  it("license(): fromCache when stale; the fields from /license/fields when the info has no entitlements", async () => {
    const fake = createFakeSdkApi({ servedFromCache: true });
    const license = await createLicenseClient({ api: "sdk", baseUrl, fetch: fake.fetch }).license();
    expect(license.fromCache).toBe(true);
    const requests: string[] = [];
    const fetch = async (request: Request) => {
      const path = new URL(request.url).pathname;
      requests.push(path);
      if (path.endsWith("/info")) return Response.json({ licenseID: "L", customerName: "C" });
      return Response.json({ seats: { value: 3, valueType: "Integer", signature: {} } });
    };
    const fromFields = await createLicenseClient({ api: "sdk", baseUrl, fetch }).license();
    expect(fromFields.fields).toMatchObject([{ field: "seats", value: 3 }]);
    expect(requests).toEqual(["/api/v1/license/info", "/api/v1/license/fields"]);
  });

  it("license(): a malformed expires_at fails loudly rather than reading as 'never expires'", async () => {
    const fake = createFakeSdkApi({
      license: {
        licenseId: "L",
        customerName: "C",
        fields: [{ name: "expires_at", value: "soon" }],
      },
    });
    const client = createLicenseClient({ api: "sdk", baseUrl, fetch: fake.fetch });
    await expect(client.license()).rejects.toSatisfy(isResponseShapeError);
  });
});

describe("api: auto", () => {
  const seen = () => {
    const urls: string[] = [];
    const fetch = async (request: Request) => {
      urls.push(request.url);
      return Response.json([]);
    };
    return { urls, fetch };
  };

  it("with a baseUrl, asks GET /healthz there once, and picks the Integration API when it names no version", async () => {
    const { urls, fetch } = seen();
    const version = createVersionClient({ baseUrl: "https://platform.test", fetch });
    expect(() => version.api).toThrow(/await version.detectApi\(\)/);
    await version.updates();
    await version.updates();
    expect(version.api).toBe("integration");
    expect(urls).toEqual([
      "https://platform.test/healthz",
      "https://platform.test/version/v1/updates",
      "https://platform.test/version/v1/updates",
    ]);
  });

  it("picks the Integration API when PLATFORM_INTEGRATIONAPI is set", () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test");
    expect(createVersionClient().api).toBe("integration");
    expect(createLicenseClient().api).toBe("integration");
  });

  it("else the newer service: PLATFORM_SDK_API, else http://replicated:3000", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
    const { urls, fetch } = seen();
    vi.stubEnv("PLATFORM_SDK_API", "http://sdk.test:3000");
    const viaVariable = createVersionClient({ fetch });
    expect(viaVariable.api).toBe("sdk");
    await viaVariable.updates();
    vi.stubEnv("PLATFORM_SDK_API", undefined);
    await createVersionClient({ fetch }).updates();
    expect(urls).toEqual([
      "http://sdk.test:3000/api/v1/app/updates",
      "http://replicated:3000/api/v1/app/updates",
    ]);
  });

  it("is decided at first use, so a client created before PLATFORM_INTEGRATIONAPI is set finds it", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
    const { urls, fetch } = seen();
    const version = createVersionClient({ fetch });
    const license = createLicenseClient({ fetch });
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test");
    await version.updates();
    expect(urls).toEqual(["https://platform.test/version/v1/updates"]);
    expect([version.api, license.api, license.capabilities.apply]).toEqual([
      "integration",
      "integration",
      true,
    ]);
  });

  it("refuses an unknown api at once", () => {
    expect(() => createVersionClient({ api: "legacy" as "sdk" })).toThrow(/"integration", "sdk"/);
  });

  it("the Integration API still reports a missing base URL as a ConfigurationError", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", undefined);
    await expect(createVersionClient({ api: "integration" }).current()).rejects.toSatisfy(
      isConfigurationError,
    );
  });
});

describe("capabilities on the Integration API's other clients", () => {
  // Wrong implementation: an audit client claiming what the Integration API cannot serve, or
  // silent about the audit it alone serves.
  it("the Audit client says what the Integration API serves: audit, and none of the newer API's calls", async () => {
    const { createAuditClient } = await import("../../../src/clients/audit/index.ts");
    const audit = createAuditClient({ baseUrl });
    try {
      expect(audit.capabilities).toMatchObject({
        audit: true,
        apply: true,
        customMetrics: false,
        supportBundle: false,
      });
      expect(Object.isFrozen(audit.capabilities)).toBe(true);
    } finally {
      await audit.close();
    }
  });

  it("the Identity and Console clients say what the Integration API serves", async () => {
    const { createIdentityClient } = await import("../../../src/clients/identity/index.ts");
    const { createConsoleClient } = await import("../../../src/clients/console/index.ts");
    for (const client of [createIdentityClient({ baseUrl }), createConsoleClient({ baseUrl })]) {
      expect(client.capabilities).toMatchObject({
        identity: true,
        startupStatus: true,
        consoleOptions: true,
        customMetrics: false,
      });
    }
  });
});
