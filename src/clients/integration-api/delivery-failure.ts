// The attempt loop of a background delivery (an audit event, sent by the in-memory client's slots
// and by the pg-boss workers alike) and its reading of each failure, in one place so that the two
// cannot disagree.
import {
  type ConfigurationError,
  isConfigurationError,
  isHttpError,
  isPlatformApiError,
} from "./errors.ts";
import { isRedirectStatus, type RetryPolicy, retryDelayMs, retryLoop } from "./retry-policy.ts";

/**
 * The verdict on a failed delivery attempt:
 * - `stop`: a configuration error, which no retry can fix; delivery stops and reports it once;
 * - `retry` after `delayMs`: a retryable failure (the server's Retry-After capped, else backoff
 *   with jitter), and a redirect only while fewer than `policy.limit` redirects in a row were
 *   retried: a passing maintenance page gets its retries, an API that moved does not hold its
 *   events for ever;
 * - `give-up`: anything else (a 4xx, an error that is not the SDK's, too many redirects).
 * `redirect` says whether the answer was a redirect, which callers count and report.
 */
export type DeliveryVerdict =
  | { action: "stop"; error: ConfigurationError }
  | { action: "retry"; redirect: boolean; delayMs: number }
  | { action: "give-up"; redirect: boolean };

/**
 * Judges a failed attempt, given how many failures in a row this one makes (1 for the first) and
 * how many redirects in a row were retried before it.
 */
export function judgeDeliveryFailure(
  error: unknown,
  { failures, redirectsRetried }: { failures: number; redirectsRetried: number },
  policy: RetryPolicy,
): DeliveryVerdict {
  if (isConfigurationError(error)) return { action: "stop", error };
  const answer = isHttpError(error) ? error : undefined;
  const redirect = answer !== undefined && isRedirectStatus(answer.status);
  const retryable =
    isPlatformApiError(error) && error.retryable && !(redirect && redirectsRetried >= policy.limit);
  return retryable
    ? { action: "retry", redirect, delayMs: retryDelayMs(answer, failures, policy) }
    : { action: "give-up", redirect };
}

/**
 * How a delivery ended:
 * - `delivered`: an attempt succeeded;
 * - `aborted`: `signal` was aborted (the sender is closing, or lost its claim); `error` is the
 *   last attempt's failure;
 * - `stopped`: a configuration error, which no retry can fix;
 * - `refused`: the API refused it for good (`redirect` when too many redirects), after
 *   `attempts` attempts.
 */
export type DeliveryOutcome =
  | { outcome: "delivered" }
  | { outcome: "aborted"; error: unknown }
  | { outcome: "stopped"; error: ConfigurationError }
  | { outcome: "refused"; error: unknown; redirect: boolean; attempts: number };

/**
 * Sends one item until it is delivered or settled otherwise, holding it while it backs off
 * (each attempt judged by {@link judgeDeliveryFailure}, its backoff counting this item's own
 * failures), so that a failing API sees one request per backoff period from each sender.
 * `onRetry` hears each failure that will be retried, before the wait.
 */
export async function deliverUntilSettled(
  send: () => Promise<unknown>,
  {
    policy,
    signal,
    onRetry,
  }: { policy: RetryPolicy; signal: AbortSignal; onRetry: (error: unknown) => void },
): Promise<DeliveryOutcome> {
  let redirectsRetried = 0;
  let attempts = 0;
  let verdict: DeliveryVerdict | undefined;
  try {
    await retryLoop(
      (attempt) => {
        attempts = attempt;
        return send();
      },
      (error, failures) => {
        if (signal.aborted) return undefined;
        verdict = judgeDeliveryFailure(error, { failures, redirectsRetried }, policy);
        if (verdict.action !== "retry") return undefined;
        if (verdict.redirect) redirectsRetried++;
        onRetry(error);
        return verdict.delayMs;
      },
      { signal },
    );
    return { outcome: "delivered" };
  } catch (error) {
    if (signal.aborted) return { outcome: "aborted", error };
    if (verdict?.action === "stop") return { outcome: "stopped", error: verdict.error };
    return { outcome: "refused", error, redirect: verdict?.redirect ?? false, attempts };
  }
}
