import { describe, expect, it } from "vitest";
import {
  deliverUntilSettled,
  judgeDeliveryFailure,
} from "../../../src/clients/integration-api/delivery-failure.ts";
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

describe("deliverUntilSettled", () => {
  // Delays of at most 1 ms: the loop's decisions are under test, not its timing.
  const fast: RetryPolicy = { limit: 2, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 };

  /** A send that fails with each of `failures` in turn, then succeeds. */
  function sequence(failures: unknown[]) {
    const calls: number[] = [];
    const send = async () => {
      calls.push(calls.length + 1);
      const failure = failures[calls.length - 1];
      if (failure !== undefined) throw failure;
    };
    return { send, calls };
  }

  it("retries outages, telling onRetry each, until the item is delivered", async () => {
    const { send, calls } = sequence([answer(503), new NetworkError(request, new Error("reset"))]);
    const retried: unknown[] = [];
    const settled = await deliverUntilSettled(send, {
      policy: fast,
      signal: new AbortController().signal,
      onRetry: (error) => retried.push(error),
    });
    expect(settled).toEqual({ outcome: "delivered" });
    expect(calls).toEqual([1, 2, 3]);
    expect(retried).toHaveLength(2);
  });

  it("settles a refusal with its attempts, and too many redirects as a redirect refusal", async () => {
    const refused = await deliverUntilSettled(sequence([answer(503), answer(400)]).send, {
      policy: fast,
      signal: new AbortController().signal,
      onRetry: () => {},
    });
    expect(refused).toMatchObject({ outcome: "refused", redirect: false, attempts: 2 });
    // limit 2: two redirects in a row are retried, the third refused.
    const redirects = [answer(302), answer(302), answer(302), answer(302)];
    const moved = await deliverUntilSettled(sequence(redirects).send, {
      policy: fast,
      signal: new AbortController().signal,
      onRetry: () => {},
    });
    expect(moved).toMatchObject({ outcome: "refused", redirect: true, attempts: 3 });
    // Only redirects count toward that limit: outages before a redirect leave it its retries.
    const outagesThenMoved = await deliverUntilSettled(
      sequence([answer(503), answer(503), answer(302)]).send,
      { policy: fast, signal: new AbortController().signal, onRetry: () => {} },
    );
    expect(outagesThenMoved).toEqual({ outcome: "delivered" });
  });

  it("stops at a configuration error and ends, without judging, once the signal is aborted", async () => {
    const misconfigured = new ConfigurationError("no base URL");
    const retried: unknown[] = [];
    const stopped = await deliverUntilSettled(sequence([misconfigured]).send, {
      policy: fast,
      signal: new AbortController().signal,
      onRetry: (error) => retried.push(error),
    });
    expect(stopped).toEqual({ outcome: "stopped", error: misconfigured });
    const closing = new AbortController();
    closing.abort();
    const aborted = await deliverUntilSettled(sequence([misconfigured, answer(503)]).send, {
      policy: fast,
      signal: closing.signal,
      onRetry: (error) => retried.push(error),
    });
    expect(aborted).toEqual({ outcome: "aborted", error: misconfigured });
    expect(retried).toEqual([]);
  });
});
