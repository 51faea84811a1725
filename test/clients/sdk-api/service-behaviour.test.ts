import { afterEach, describe, expect, it, vi } from "vitest";
import { createAppClient, isUnsupportedOperationError } from "../../../src/clients/app/index.ts";
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

describe("answers of the service as it really runs", () => {
  // Finding 7: the local copy is updated, the upstream send failed: transient, not a bad request.
  it("retries a custom-metrics 400 with an empty body, and says what it means when it persists", async () => {
    let calls = 0;
    const app = createAppClient({
      baseUrl,
      retry: { limit: 2, baseDelayMs: 0 },
      fetch: async () => {
        calls++;
        return calls === 1 ? new Response("", { status: 400 }) : Response.json("");
      },
    });
    expect(await app.setCustomMetrics({ users: 1 })).toEqual({ status: 200, replayed: false });
    expect(calls).toBe(2);

    const failing = createAppClient({
      baseUrl,
      retry: { limit: 1, baseDelayMs: 0 },
      fetch: async () => new Response("", { status: 400 }),
    });
    const error = await failing
      .updateCustomMetrics({ users: 1 })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "HttpError", status: 400, retryable: true, attempts: 2 });
    expect(String(error)).toContain("could not be passed on");
    // m3: only what is known: a vendor's refusal and an air-gap report give the same answer,
    // and the admin console keeps no copy.
    expect(String(error)).toContain("possibly the vendor refusing them");
    expect(String(error)).toContain("air gap");
    expect(String(error)).not.toContain("updated its copy");
    expect(String(error)).not.toMatch(/a transient failure of its uplink/);
    // A 400 with a message is the caller's mistake: not retried.
    let bad = 0;
    const refused = createAppClient({
      baseUrl,
      fetch: async () => {
        bad++;
        return new Response("no data provided", { status: 400 });
      },
    });
    await expect(refused.setCustomMetrics({ users: 1 })).rejects.toMatchObject({
      retryable: false,
    });
    expect(bad).toBe(1);
  });

  it("reads a 405 of an older service as an UnsupportedOperationError", async () => {
    const app = createAppClient({
      baseUrl,
      fetch: async () => new Response("", { status: 405 }),
    });
    const error = await app.updateCustomMetrics({ users: 1 }).catch((caught: unknown) => caught);
    expect(isUnsupportedOperationError(error)).toBe(true);
    expect(String(error)).toContain(
      "answered 405: this service version lacks PATCH of custom metrics",
    );
  });

  // Finding 10: Go's zero time is "never set"; a time the service treats as text fails nothing.
  it("reads Go's zero time as absent, and keeps an unparseable time as text without failing the call", async () => {
    const app = createAppClient({
      baseUrl,
      fetch: async (request) =>
        new URL(request.url).pathname === "/api/v1/app/status"
          ? Response.json({
              appStatus: { appSlug: "app", state: "ready", updatedAt: "0001-01-01T00:00:00Z" },
            })
          : Response.json({
              appSlug: "app",
              currentRelease: { versionLabel: "1.0.0", createdAt: "yesterday", deployedAt: "" },
            }),
    });
    const status = await app.status();
    expect(status.state).toBe("ready");
    expect("updatedAt" in status).toBe(false);
    const info = await app.info();
    expect(info.currentRelease.version).toBe("1.0.0");
    expect("releaseDate" in info.currentRelease).toBe(false);
    // Kept as the text the service sent; the empty deployedAt is simply absent.
    expect(info.currentRelease.extra).toEqual({ createdAt: "yesterday" });
    expect("extra" in status).toBe(false);
    const version = createVersionClient({
      api: "sdk",
      baseUrl,
      fetch: async () =>
        Response.json({
          currentRelease: { versionLabel: "1.0.0", createdAt: "0001-01-01T00:00:00Z" },
        }),
    });
    const current = await version.current();
    expect("releaseDate" in current).toBe(false);
    expect(current.extra).not.toHaveProperty("createdAt");
    const unreadable = createVersionClient({
      api: "sdk",
      baseUrl,
      fetch: async (request) =>
        new URL(request.url).pathname === "/api/v1/app/updates"
          ? Response.json([{ versionLabel: "2.0.0", createdAt: "2024-13-45" }])
          : Response.json({ currentRelease: { versionLabel: "1.0.0", deployedAt: "soon" } }),
    });
    expect((await unreadable.current()).extra).toMatchObject({ deployedAt: "soon" });
    const [update] = await unreadable.updates();
    expect(update).toMatchObject({ version: "2.0.0", extra: { createdAt: "2024-13-45" } });
    expect(update).not.toHaveProperty("releaseDate");
  });

  // Finding 11: with neither variable set, a legacy-install developer must be told about both.
  it("names both variables when neither is set and the default address fails", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
    vi.stubEnv("PLATFORM_SDK_API", "");
    try {
      const version = createVersionClient({
        fetch: () => Promise.reject(new TypeError("fetch failed")),
        retry: { limit: 0 },
      });
      const error = await version.current().catch((caught: unknown) => caught);
      expect(String(error)).toContain(
        "PLATFORM_INTEGRATIONAPI (legacy installs) or PLATFORM_SDK_API",
      );
      expect(String(error)).toContain("http://replicated:3000");
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("custom metrics on KOTS installs", () => {
  it('api "kots" POSTs the whole set to the admin console, and refuses PATCH and DELETE, which it lacks', async () => {
    const { urls, fetch } = service({
      "/api/v1/app/custom-metrics": () => new Response(null, { status: 200 }),
    });
    const app = createAppClient({ api: "kots", fetch });
    expect(app.capabilities.customMetrics).toBe(true);
    expect(await app.setCustomMetrics({ users: 3 })).toEqual({ status: 200, replayed: false });
    expect(urls).toEqual(["POST http://kotsadm:3000/api/v1/app/custom-metrics"]);
    for (const call of [
      () => app.updateCustomMetrics({ users: 4 }),
      () => app.deleteCustomMetric("users"),
    ]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(isUnsupportedOperationError(error)).toBe(true);
      expect(String(error)).toContain("POST only: send the whole set with setCustomMetrics()");
    }
    expect(urls).toHaveLength(1);
  });

  it("names the admin console's upgrade when an older one lacks the route", async () => {
    const app = createAppClient({
      api: "kots",
      baseUrl,
      fetch: async () => new Response("", { status: 404 }),
    });
    const error = await app.setCustomMetrics({ users: 3 }).catch((caught: unknown) => caught);
    expect(String(error)).toContain("KOTS 1.102.0 and later take custom metrics");
  });
});
