// What audit delivery does after a failed attempt, for the in-memory client's slots and the
// pg-boss workers alike: one reading of the error, so that the two cannot disagree.
import {
  type ConfigurationError,
  isConfigurationError,
  isHttpError,
  isPlatformApiError,
} from "./errors.ts";
import { isRedirectStatus, type RetryPolicy, retryDelayMs } from "./retry-policy.ts";

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
