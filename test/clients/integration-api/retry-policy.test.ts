import { describe, expect, it } from "vitest";
import {
  isRedirectStatus,
  isRetryableStatus,
  type RetryPolicy,
  retryAfterMs,
  retryDelayMs,
  retryLoop,
} from "../../../src/clients/integration-api/retry-policy.ts";
import { maxTimerMs } from "../../../src/clients/integration-api/timers.ts";

const policy: RetryPolicy = {
  limit: 2,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  maxRetryAfterMs: 5_000,
};
const now = Date.parse("2026-01-01T00:00:00Z");

function answer(status: number, retryAfter?: string) {
  return {
    status,
    headers: new Headers(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
  };
}

describe("the retry policy", () => {
  it("retries 3xx, 408, 429 and 5xx, and no other status", () => {
    const retried = [
      200, 299, 300, 301, 399, 400, 404, 407, 408, 409, 429, 499, 500, 503, 599, 600,
    ].filter(isRetryableStatus);
    expect(retried).toEqual([300, 301, 399, 408, 429, 500, 503, 599]);
    expect([299, 300, 399, 400].map(isRedirectStatus)).toEqual([false, true, true, false]);
  });

  it("reads Retry-After as delay-seconds or an IMF-fixdate, on 429 and 503 only", () => {
    expect(retryAfterMs(429, answer(429, "12").headers, now)).toBe(12_000);
    expect(retryAfterMs(503, answer(503, " 0 ").headers, now)).toBe(0);
    expect(retryAfterMs(503, answer(503, "Thu, 01 Jan 2026 00:00:30 GMT").headers, now)).toBe(
      30_000,
    );
    // A date in the past means now.
    expect(retryAfterMs(429, answer(429, "Wed, 31 Dec 2025 23:00:00 GMT").headers, now)).toBe(0);
    for (const ignored of [
      "2026-01-01T00:00:30Z",
      "1.5",
      "-1",
      "soon",
      "Thursday, 01-Jan-26 00:00:30 GMT",
    ]) {
      expect(retryAfterMs(503, answer(503, ignored).headers, now), ignored).toBeUndefined();
    }
    expect(retryAfterMs(500, answer(500, "12").headers, now)).toBeUndefined();
    expect(retryAfterMs(429, answer(429).headers, now)).toBeUndefined();
    const rateLimited = new Headers({ "ratelimit-reset": "7", "x-ratelimit-reset": "7" });
    expect(retryAfterMs(429, rateLimited, now)).toBeUndefined();
  });

  it("caps Retry-After at maxRetryAfterMs, without jitter", () => {
    expect(retryDelayMs(answer(503, "3600"), 1, policy, () => 0)).toBe(5_000);
    expect(retryDelayMs(answer(429, "2"), 1, policy, () => 0)).toBe(2_000);
  });

  it("backs off with full jitter over a doubling delay, up to maxDelayMs", () => {
    const top = (failures: number) => retryDelayMs(undefined, failures, policy, () => 1);
    expect([1, 2, 3, 4, 5, 10].map(top)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(retryDelayMs(answer(500), 3, policy, () => 0.5)).toBe(200);
    expect(retryDelayMs(undefined, 1, policy, () => 0)).toBe(0);
  });

  it("never asks for a wait longer than a timer can hold", () => {
    const huge = {
      ...policy,
      maxRetryAfterMs: Number.MAX_SAFE_INTEGER,
      maxDelayMs: Number.MAX_SAFE_INTEGER,
    };
    expect(retryDelayMs(answer(503, "9999999999"), 1, huge)).toBe(maxTimerMs);
    expect(retryDelayMs(undefined, 60, huge, () => 1)).toBe(maxTimerMs);
  });
});

// The one loop under a call (http.ts) and a background delivery (delivery-failure.ts): what
// differs between them is `next` and `keepAlive`, so the loop itself must neither retry past
// `next`'s undefined nor attempt again after an abort.
describe("retryLoop", () => {
  it("attempts again after each wait `next` gives, numbering attempts from 1", async () => {
    const seen: [unknown, number][] = [];
    const result = await retryLoop(
      async (attempts) => {
        if (attempts < 3) throw new Error(`failure ${attempts}`);
        return `done at ${attempts}`;
      },
      (error, attempts) => {
        seen.push([(error as Error).message, attempts]);
        return 0;
      },
    );
    expect(result).toBe("done at 3");
    expect(seen).toEqual([
      ["failure 1", 1],
      ["failure 2", 2],
    ]);
  });

  it("ends with the failure `next` declines to retry", async () => {
    let calls = 0;
    const failing = retryLoop(
      async (attempts) => {
        calls++;
        throw new Error(`failure ${attempts}`);
      },
      (_error, attempts) => (attempts < 2 ? 0 : undefined),
    );
    await expect(failing).rejects.toThrow("failure 2");
    expect(calls).toBe(2);
  });

  // Catches a loop that attempts once more after an abort during its wait.
  it("ends with the signal's reason when it aborts during the wait, without another attempt", async () => {
    const controller = new AbortController();
    let calls = 0;
    const looping = retryLoop(
      async () => {
        calls++;
        throw new Error("outage");
      },
      () => {
        queueMicrotask(() => controller.abort(new Error("closing")));
        return 60_000;
      },
      { signal: controller.signal },
    );
    await expect(looping).rejects.toThrow("closing");
    expect(calls).toBe(1);
  });
});
