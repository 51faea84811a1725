import { describe, expect, it } from "vitest";
import { judgeDeliveryFailure } from "../../../src/clients/integration-api/delivery-failure.ts";
import {
  ConfigurationError,
  HttpError,
  NetworkError,
} from "../../../src/clients/integration-api/errors.ts";
import type { RetryPolicy } from "../../../src/clients/integration-api/retry-policy.ts";

const policy: RetryPolicy = {
  limit: 2,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  maxRetryAfterMs: 5_000,
};
const request = { method: "POST", url: "https://api.test/auditlog/v1/events", attempts: 1 };
const answer = (status: number, headers: Record<string, string> = {}) =>
  new HttpError({ ...request, status, headers: new Headers(headers), body: "" });
const first = { failures: 1, redirectsRetried: 0 };

describe("judgeDeliveryFailure", () => {
  it("stops at a configuration error, which no retry can fix", () => {
    const error = new ConfigurationError("no base URL");
    expect(judgeDeliveryFailure(error, first, policy)).toEqual({ action: "stop", error });
  });

  it("retries an outage after the server's Retry-After, capped, or a backoff within the policy", () => {
    expect(judgeDeliveryFailure(answer(429, { "retry-after": "3" }), first, policy)).toEqual({
      action: "retry",
      redirect: false,
      delayMs: 3_000,
    });
    expect(judgeDeliveryFailure(answer(503, { "retry-after": "60" }), first, policy)).toMatchObject(
      { action: "retry", delayMs: 5_000 },
    );
    const network = judgeDeliveryFailure(
      new NetworkError(request, new Error("reset")),
      first,
      policy,
    );
    expect(network).toMatchObject({ action: "retry", redirect: false });
    expect((network as { delayMs: number }).delayMs).toBeLessThanOrEqual(100);
    // The third failure in a row backs off up to 400 ms, not 100.
    const third = { failures: 3, redirectsRetried: 0 };
    const delays = Array.from({ length: 200 }, () => {
      const verdict = judgeDeliveryFailure(answer(500), third, policy) as { delayMs: number };
      return verdict.delayMs;
    });
    expect(Math.max(...delays)).toBeGreaterThan(100);
    expect(Math.max(...delays)).toBeLessThanOrEqual(400);
  });

  it("gives up on a refusal and on an error that is not the SDK's", () => {
    expect(judgeDeliveryFailure(answer(400), first, policy)).toEqual({
      action: "give-up",
      redirect: false,
    });
    expect(judgeDeliveryFailure(new TypeError("bug"), first, policy)).toEqual({
      action: "give-up",
      redirect: false,
    });
  });

  it("retries a redirect only `limit` times in a row, and says it was one", () => {
    const redirect = answer(302, { location: "https://elsewhere.test/" });
    expect(
      judgeDeliveryFailure(redirect, { failures: 1, redirectsRetried: 1 }, policy),
    ).toMatchObject({ action: "retry", redirect: true });
    expect(judgeDeliveryFailure(redirect, { failures: 3, redirectsRetried: 2 }, policy)).toEqual({
      action: "give-up",
      redirect: true,
    });
    // Other failures are not bounded by the redirect count.
    expect(
      judgeDeliveryFailure(answer(503), { failures: 3, redirectsRetried: 2 }, policy),
    ).toMatchObject({ action: "retry" });
  });
});
