// The Integration API's retry policy and its one retry loop: which failures are retried, how long
// to wait, and the loop that waits, shared by a call (http.ts) and a background delivery
// (delivery-failure.ts), which differ only in when they stop.
import { maxTimerMs, sleep } from "./timers.ts";

/**
 * The one retry policy of every Integration API client: which failures are retried, how long to
 * wait before the next attempt, and how a server's Retry-After is read.
 */
export interface RetryPolicy {
  /** Retries after the first attempt, where a call retries at all. */
  limit: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

/**
 * Whether an answer with this status may succeed if sent again: 408, 429 and every 5xx (the API
 * is overloaded or failing), and every 3xx (a redirect, which is never followed, and may be a
 * passing maintenance page; the audit client retries those only `retry.limit` times).
 */
export function isRetryableStatus(status: number): boolean {
  return (
    isRedirectStatus(status) || status === 408 || status === 429 || (status >= 500 && status <= 599)
  );
}

/** Whether this status is a redirect, which no client follows. */
export function isRedirectStatus(status: number): boolean {
  return status >= 300 && status <= 399;
}

const delaySeconds = /^\d{1,10}$/;
// RFC 9110's preferred HTTP-date form, the only one servers send today: `Sun, 06 Nov 1994 08:49:37 GMT`.
const imfFixdate =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The server's Retry-After, in milliseconds from `now`, when the status gives it meaning (429 and
 * 503): delay-seconds, or an HTTP-date in IMF-fixdate form. Anything else (another date format,
 * RateLimit-Reset and its X- variants, whose meaning differs between servers) is ignored, and the
 * computed backoff applies.
 */
export function retryAfterMs(
  status: number,
  headers: Headers,
  now = Date.now(),
): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const value = headers.get("retry-after")?.trim();
  if (value === undefined) return undefined;
  if (delaySeconds.test(value)) return Number(value) * 1000;
  if (!imfFixdate.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before the next attempt after `failures` consecutive failures (1 for the first), the
 * last of which got `answer` (undefined when none came):
 * the server's Retry-After capped at `maxRetryAfterMs`, else full jitter over an exponential
 * backoff (a random delay up to `baseDelayMs` doubled per failure, at most `maxDelayMs`). Never
 * longer than a timer can wait.
 */
export function retryDelayMs(
  answer: { status: number; headers: Headers } | undefined,
  failures: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const retryAfter = answer === undefined ? undefined : retryAfterMs(answer.status, answer.headers);
  const delay =
    retryAfter === undefined
      ? random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1))
      : Math.min(retryAfter, policy.maxRetryAfterMs);
  return Math.min(delay, maxTimerMs);
}

/**
 * The one retry loop of the Integration API clients: runs `attempt` (given its number, 1 for the
 * first) until it resolves, and after each failure asks `next` for the wait before the next
 * attempt, or undefined to end the loop with that failure. An abort of `signal` during the wait
 * ends it with the signal's reason.
 *
 * Its two users differ only in `next` and `keepAlive`, for reasons that are theirs: a call
 * (http.ts) is awaited by someone, so it retries at most `retry.limit` times within its
 * `totalTimeoutMs` and its wait keeps the process alive; a background delivery
 * (delivery-failure.ts) loses nothing, so it retries an outage for as long as it lasts, stops at a
 * configuration error, bounds only redirects in a row, and its wait lets the process exit.
 */
export async function retryLoop<T>(
  attempt: (attempts: number) => Promise<T>,
  next: (error: unknown, attempts: number) => number | undefined,
  { signal, keepAlive = false }: { signal?: AbortSignal | undefined; keepAlive?: boolean } = {},
): Promise<T> {
  for (let attempts = 1; ; attempts++) {
    let delayMs: number | undefined;
    try {
      return await attempt(attempts);
    } catch (error) {
      delayMs = next(error, attempts);
      if (delayMs === undefined) throw error;
    }
    await sleep(delayMs, signal, { keepAlive });
    if (signal?.aborted) throw signal.reason;
  }
}
