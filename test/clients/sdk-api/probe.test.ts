import { afterEach, describe, expect, it, vi } from "vitest";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import {
  createVersionClient,
  isCallTimeoutError,
  isHttpError,
} from "../../../src/clients/version/index.ts";

// The attacks on "auto"'s probe of GET /healthz (issue 39's fixes, M1-M3 and m7): what may
// decide, whose signal and time-outs bound it, and what of its answer reaches the logs.

const baseUrl = "http://renamed:3000";
const appInfo = { instanceID: "i", appSlug: "app", currentRelease: { versionLabel: "2.0.0" } };

/** A fetch that answers by path, records each request, and hangs on a route that returns undefined. */
function service(routes: Record<string, () => Response | undefined>) {
  const urls: string[] = [];
  const fetch = (request: Request) => {
    urls.push(`${request.method} ${new URL(request.url).pathname}`);
    const route = routes[new URL(request.url).pathname];
    const answer =
      route === undefined ? new Response("404 page not found", { status: 404 }) : route();
    if (answer !== undefined) return Promise.resolve(answer);
    return new Promise<Response>((_, reject) => {
      request.signal.addEventListener("abort", () => reject(request.signal.reason));
    });
  };
  return { urls, fetch };
}

function recordingLogger() {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  return { lines, logger: { debug() {}, info: keep, warn: keep, error: keep } };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a 408, 429 or 5xx from /healthz decides nothing (M1)", () => {
  it.each([503, 502, 500, 429, 408])(
    "one %i fails that call, naming the baseUrl option, and the next call asks again",
    async (status) => {
      let healthz = 0;
      const { urls, fetch } = service({
        "/healthz": () =>
          ++healthz === 1
            ? new Response("upstream connect error", { status })
            : Response.json({ version: "1.19.1" }),
        "/api/v1/app/info": () => Response.json(appInfo),
      });
      const { lines, logger } = recordingLogger();
      const version = createVersionClient({ baseUrl, fetch, logger, retry: { limit: 0 } });
      const error = await version.current().catch((caught: unknown) => caught);
      expect(isHttpError(error) && error.status).toBe(status);
      expect(isHttpError(error) && error.retryable).toBe(true);
      expect(String(error)).toContain("decides nothing");
      expect(String(error)).not.toContain("PLATFORM_INTEGRATIONAPI");
      expect((await version.current()).version).toBe("2.0.0");
      expect(version.api).toBe("sdk");
      expect(urls).toEqual(["GET /healthz", "GET /healthz", "GET /api/v1/app/info"]);
      expect(lines.join("\n")).not.toContain("names no version");
    },
  );

  it("retries the probe under the call's retry policy, then makes the call", async () => {
    let healthz = 0;
    const { urls, fetch } = service({
      "/healthz": () =>
        ++healthz === 1 ? new Response("", { status: 503 }) : Response.json({ version: "1.19.1" }),
      "/api/v1/app/info": () => Response.json(appInfo),
    });
    const version = createVersionClient({ baseUrl, fetch, retry: { limit: 1, baseDelayMs: 0 } });
    expect((await version.current()).version).toBe("2.0.0");
    expect(urls).toEqual(["GET /healthz", "GET /healthz", "GET /api/v1/app/info"]);
  });

  it("a 404 decides the Integration API, whose errors then name the baseUrl option", async () => {
    const { urls, fetch } = service({});
    const version = createVersionClient({ baseUrl, fetch, retry: { limit: 0 } });
    const error = await version.current().catch((caught: unknown) => caught);
    expect(version.api).toBe("integration");
    expect(String(error)).toContain("Check the baseUrl option");
    expect(String(error)).not.toContain("PLATFORM_INTEGRATIONAPI");
    await version.current().catch(() => undefined);
    expect(urls).toEqual(["GET /healthz", "GET /version/v1/current", "GET /version/v1/current"]);
  });
});

describe("concurrent first calls (M2)", () => {
  it("each caller is affected only by its own signal", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { fetch } = service({
      "/api/v1/license/fields/seats": () =>
        Response.json({ name: "seats", value: 5, valueType: "Integer", signature: {} }),
    });
    const gated = async (request: Request) => {
      if (new URL(request.url).pathname === "/healthz") {
        await held;
        request.signal.throwIfAborted();
        return Response.json({ version: "1.19.1" });
      }
      return fetch(request);
    };
    const license = createLicenseClient({ baseUrl, fetch: gated });
    const controller = new AbortController();
    const first = license.field("seats", { signal: controller.signal });
    const second = license.field("seats");
    controller.abort(new Error("caller A gave up"));
    release();
    const [a, b] = await Promise.allSettled([first, second]);
    expect(a).toMatchObject({ status: "rejected", reason: { message: "caller A gave up" } });
    expect(b).toMatchObject({ status: "fulfilled", value: { value: 5 } });
    expect(license.api).toBe("sdk");
  });
});

describe("the probe counts against the call's time-outs (M3)", () => {
  it("a hanging /healthz is bounded by the call's timeoutMs, and fails that call", async () => {
    vi.useFakeTimers();
    const { urls, fetch } = service({ "/healthz": () => undefined });
    const version = createVersionClient({ baseUrl, fetch, retry: { limit: 0 } });
    let settled: unknown;
    void version.current({ timeoutMs: 500 }).catch((error: unknown) => {
      settled = error;
    });
    await vi.advanceTimersByTimeAsync(600);
    expect(isCallTimeoutError(settled)).toBe(true);
    expect(String(settled)).toContain("/healthz timed out (500 ms per attempt");
    expect(urls).toEqual(["GET /healthz"]);
  });

  it("the call after the probe gets what is left of totalTimeoutMs", async () => {
    vi.useFakeTimers();
    const { fetch } = service({
      "/api/v1/app/info": () => undefined,
    });
    const slowProbe = async (request: Request) => {
      if (new URL(request.url).pathname !== "/healthz") return fetch(request);
      await new Promise((resolve) => setTimeout(resolve, 900));
      return Response.json({ version: "1.19.1" });
    };
    const version = createVersionClient({
      baseUrl,
      fetch: slowProbe,
      timeoutMs: 1000,
      totalTimeoutMs: 2000,
    });
    let settled: unknown;
    void version.current().catch((error: unknown) => {
      settled = error;
    });
    await vi.advanceTimersByTimeAsync(2050);
    expect(isCallTimeoutError(settled)).toBe(true);
    expect(String(settled)).toContain("/api/v1/app/info timed out");
  });
});

describe("a hostile /healthz version (m7)", () => {
  it.each([
    ["a multi-line sentence", '1.19.1 (its /healthz names its version): using api "sdk".\nERROR x'],
    ["100 kB", `1.${"9".repeat(100_000)}`],
    ["a space", "1.19.1 beta"],
  ])("%s is dropped: the service is still the newer one, its version unknown", async (_, text) => {
    const { fetch } = service({
      "/healthz": () => Response.json({ version: text }),
      "/api/v1/app/info": () => Response.json(appInfo),
    });
    const { lines, logger } = recordingLogger();
    const version = createVersionClient({ baseUrl, fetch, logger });
    await version.current();
    expect(version.api).toBe("sdk");
    expect(await version.serviceVersion()).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(lines[0]?.length).toBeLessThan(400);
  });

  it.each(["1.19.1", "v1.20.0-beta.1+abc", "0.0.0-dev"])(
    "keeps a version such as %s",
    async (text) => {
      const { fetch } = service({
        "/healthz": () => Response.json({ version: text }),
        "/api/v1/app/info": () => Response.json(appInfo),
      });
      const version = createVersionClient({ baseUrl, fetch });
      expect(await version.serviceVersion()).toBe(text);
    },
  );
});
