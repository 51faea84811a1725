import { afterEach, describe, expect, it, vi } from "vitest";
import { createAppClient } from "../../../src/clients/app/index.ts";
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
