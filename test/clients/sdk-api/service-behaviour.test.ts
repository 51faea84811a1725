import { afterEach, describe, expect, it, vi } from "vitest";
import { createAppClient } from "../../../src/clients/app/index.ts";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import { createVersionClient, isCallTimeoutError } from "../../../src/clients/version/index.ts";

const baseUrl = "http://replicated.test:3000";

/** A fetch that answers after `delayMs` of (fake) time, or rejects when its attempt is aborted. */
function answersAfter(delayMs: number, answer: () => Response) {
  const attempts: number[] = [];
  const fetch = (request: Request) =>
    new Promise<Response>((resolve, reject) => {
      attempts.push(attempts.length + 1);
      const timer = setTimeout(() => resolve(answer()), delayMs);
      request.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(request.signal.reason);
      });
    });
  return { fetch, attempts };
}

const cachedInfo = () =>
  Response.json(
    { instanceID: "i", appSlug: "app", currentRelease: { versionLabel: "1.0.0" } },
    { headers: { "x-replicated-served-from-cache": "true" } },
  );

// Issue 39, finding 1: the service answers from its cache after its own upstream calls time out
// (10 s each, up to two per request); the client must still be waiting then.
describe("the per-attempt time-out of the newer API outlasts the service's own", () => {
  afterEach(() => vi.useRealTimers());

  it("waits for a cached answer that comes after 20 s, in one attempt", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const service = answersAfter(20_000, cachedInfo);
    const app = createAppClient({ api: "sdk", baseUrl, fetch: service.fetch });
    const info = app.info();
    const settled = info.then(
      (value) => value,
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await settled).toMatchObject({ fromCache: true, appSlug: "app" });
    expect(service.attempts).toEqual([1]);
  });

  it("times an attempt out after 30 s by default", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const service = answersAfter(31_000, cachedInfo);
    const version = createVersionClient({
      api: "sdk",
      baseUrl,
      fetch: service.fetch,
      retry: { limit: 0 },
    });
    const settled = version.current().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(31_000);
    const error = await settled;
    expect(isCallTimeoutError(error)).toBe(true);
    expect(String(error)).toContain("30000 ms per attempt, 60000 ms in total");
  });

  it("leaves the Integration API's 10 s per attempt as it was", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const service = answersAfter(15_000, () =>
      Response.json({ version: "1", release_sequence: 1, install_date: "2024-01-01T00:00:00Z" }),
    );
    const version = createVersionClient({
      api: "integration",
      baseUrl,
      fetch: service.fetch,
      retry: { limit: 0 },
    });
    const settled = version.current().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(15_000);
    const error = await settled;
    expect(isCallTimeoutError(error)).toBe(true);
    expect(String(error)).toContain("10000 ms per attempt, 30000 ms in total");
  });
});

/** A fetch that records each URL and answers by path; `/healthz` as the newer service would. */
function service(routes: Record<string, () => Response>) {
  const urls: string[] = [];
  const fetch = async (request: Request) => {
    urls.push(`${request.method} ${request.url}`);
    const route = routes[new URL(request.url).pathname];
    return route === undefined ? new Response("404 page not found", { status: 404 }) : route();
  };
  return { urls, fetch };
}

const sdkRoutes = {
  "/healthz": () => Response.json({ version: "1.19.1" }),
  "/api/v1/app/info": () =>
    Response.json({ instanceID: "i", appSlug: "app", currentRelease: { versionLabel: "2.0.0" } }),
  "/api/v1/app/custom-metrics": () => Response.json(""),
  "/api/v1/license/fields/seats": () =>
    Response.json({ name: "seats", value: 5, valueType: "Integer", signature: {} }),
};

// Issue 39, finding 2: a renamed service (Helm nameOverride, an alias) is still the newer API.
describe("a client pointed at an address", () => {
  it("createAppClient({ baseUrl }) talks to the newer API there", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://legacy.test");
    try {
      const { urls, fetch } = service(sdkRoutes);
      const app = createAppClient({ baseUrl: "http://my-sdk.ns.svc:3000", fetch });
      expect(app.api).toBe("sdk");
      expect(app.capabilities.customMetrics).toBe(true);
      expect(await app.setCustomMetrics({ users: 1 })).toEqual({ status: 200, replayed: false });
      expect(urls).toEqual(["POST http://my-sdk.ns.svc:3000/api/v1/app/custom-metrics"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("Version and License with api auto ask /healthz once, say what they chose, then use the newer API", async () => {
    const { urls, fetch } = service(sdkRoutes);
    const logged: string[] = [];
    const logger = { ...console, info: (message: string) => logged.push(message) };
    const baseUrl = "http://renamed:3000";
    const version = createVersionClient({ baseUrl, fetch, logger });
    expect((await version.current()).version).toBe("2.0.0");
    expect(version.api).toBe("sdk");
    expect(await version.serviceVersion()).toBe("1.19.1");
    await version.current();
    const license = createLicenseClient({ baseUrl, fetch, logger });
    expect(await license.detectApi()).toBe("sdk");
    expect((await license.field("seats"))?.value).toBe(5);
    expect(urls).toEqual([
      "GET http://renamed:3000/healthz",
      "GET http://renamed:3000/api/v1/app/info",
      "GET http://renamed:3000/api/v1/app/info",
      "GET http://renamed:3000/healthz",
      "GET http://renamed:3000/api/v1/license/fields/seats",
    ]);
    expect(logged).toEqual([
      expect.stringContaining(
        'answers as the platform\'s newer in-cluster SDK service 1.19.1 (its /healthz names its version): using api "sdk"',
      ),
      expect.stringContaining('using api "sdk"'),
    ]);
  });

  it("an explicit api skips the probe", async () => {
    const { urls, fetch } = service(sdkRoutes);
    const version = createVersionClient({ api: "sdk", baseUrl: "http://renamed:3000", fetch });
    await version.current();
    expect(urls).toEqual(["GET http://renamed:3000/api/v1/app/info"]);
    expect(await createVersionClient({ api: "integration", baseUrl, fetch }).serviceVersion()).toBe(
      undefined,
    );
  });

  it("a probe that gets no answer decides nothing: the call reports the failure, the next probes again", async () => {
    let down = true;
    const { urls, fetch } = service(sdkRoutes);
    const flaky = async (request: Request) => {
      if (down) throw new TypeError("fetch failed");
      return fetch(request);
    };
    const version = createVersionClient({
      baseUrl: "http://renamed:3000",
      fetch: flaky,
      retry: { limit: 0 },
    });
    await expect(version.current()).rejects.toMatchObject({ name: "NetworkError" });
    down = false;
    expect((await version.current()).version).toBe("2.0.0");
    expect(urls).toEqual([
      "GET http://renamed:3000/healthz",
      "GET http://renamed:3000/api/v1/app/info",
    ]);
  });
});
