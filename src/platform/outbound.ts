// The platform side's one outbound HTTP layer: how everything that plays the platform's part calls
// an application (the clients of its Provisioning API, the read route, the doctor's probes) checks
// the URL, bounds the call by a time-out and the caller's signal, refuses redirects, reads the
// answer under a size cap and says what went wrong. The transports are two: fetch (any runtime, a
// handler in-process) here, and Node's http module in node-http-client.ts, which the directory
// sync uses for its speed; that one shares everything here but the sending.
//
// No retries, unlike the Integration API layer (src/clients/integration-api): the platform sends
// a message once per cycle and judges the exact status it got; its retry is the next cycle, from
// the cookie, and a client that retried within a call would hide the answers the conformance
// checker and the simulator exist to report.
import type { JsonValue } from "type-fest";
import { isCertificateProblem } from "../internal/certificate-problem.ts";
import { readFailureCause } from "../internal/failure-cause.ts";
import { readCappedText } from "../internal/read-capped-text.ts";
import { normalizeBaseUrl } from "../internal/url.ts";

/**
 * How much of an application's answer to a message the platform's clients read: the body is for a
 * report (an error's reason), and a server that sends a runaway body must not exhaust the sender's
 * memory. Past it the answer is cut off and reported as text.
 */
export const maxAnswerBytes = 64 * 1024;

/**
 * How much of the read route's answer is read: a stored user, as large as the Provisioning API
 * accepts one by default (its 1 MiB body limit), which a user with thousands of groups nears. A
 * longer answer is refused as a misbehaving read route rather than read on.
 */
export const maxUserAnswerBytes = 1024 * 1024;

// Error bodies are for a human to read; a runaway one must not flood a report.
const maxBodyText = 2000;

/**
 * The base URL of an application's Provisioning API, checked and normalized (the platform appends
 * `/v1/...` to its provisioner URL, whatever path it carries): the one check of every client, the
 * CLI's `<url>` and doctor's `--provisioner`.
 *
 * @throws TypeError starting "The Provisioning API's URL", saying what is wrong.
 */
export function checkProvisioningUrl(target: string | URL): string {
  try {
    return normalizeBaseUrl(target);
  } catch (error) {
    throw new TypeError(`The Provisioning API's URL ${(error as Error).message}`);
  }
}

/** What one exchange gave: the answer, its body read under the cap, or why none came. */
export type Exchanged = (
  | {
      status: number;
      headers: Headers;
      text: string;
      complete: boolean;
      error?: undefined;
      timedOut?: undefined;
    }
  | { status?: undefined; error: string; fatal?: true; timedOut?: true }
) & { durationMs: number };

/** What bounds one exchange. */
export interface ExchangeLimits {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** The fix to name when the application's certificate does not verify, which makes it fatal. */
  certificateFix?: string | undefined;
}

/**
 * Sends one request through `send` (fetch, or a handler's `fetch` in-process) and reads the answer
 * under `maxBytes`; never rejects. A redirect is not followed: its 3xx is the answer, as the exact
 * status is what the platform judges (and a followed POST would reach another URL). The time-out
 * and the caller's signal bound the whole exchange, the body included, even against a handler
 * that ignores its request's signal.
 */
export async function exchange(
  send: (request: Request) => Promise<Response>,
  request: { url: string; method: string; headers?: Record<string, string>; body?: string },
  { timeoutMs, maxBytes, signal, certificateFix }: ExchangeLimits,
): Promise<Exchanged> {
  const elapsed = stopwatch();
  const timeout = AbortSignal.timeout(timeoutMs);
  const abort = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const answer = (async () => {
      const response = await send(
        new Request(request.url, {
          method: request.method,
          redirect: "manual",
          signal: abort,
          ...(request.headers && { headers: request.headers }),
          ...(request.body !== undefined && { body: request.body }),
        }),
      );
      const { body, complete } = await readCappedText(response, maxBytes, abort);
      return { status: response.status, headers: response.headers, text: body, complete };
    })();
    return { ...(await raceAbort(answer, abort)), durationMs: elapsed() };
  } catch (error) {
    const timedOut = timeout.aborted && !signal?.aborted;
    return {
      ...describeFailure(error, { aborted: abort.aborted, timedOut, timeoutMs, certificateFix }),
      durationMs: elapsed(),
    };
  }
}

/**
 * Why no answer came, in one line: `no answer within N ms` (with `timedOut`), `aborted` for the
 * caller's signal, else the failure's cause (ECONNREFUSED...); a certificate that did not verify
 * is `fatal`, with `certificateFix`, when the caller names one: the next cycle would meet the
 * same certificate. The one reading of a failure for both transports.
 */
export function describeFailure(
  error: unknown,
  {
    aborted,
    timedOut,
    timeoutMs,
    certificateFix,
  }: {
    aborted: boolean;
    timedOut: boolean;
    timeoutMs: number;
    certificateFix?: string | undefined;
  },
): { error: string; fatal?: true; timedOut?: true } {
  if (timedOut) return { error: `no answer within ${timeoutMs} ms`, timedOut: true };
  if (aborted) return { error: "aborted" };
  const { code, message } = readFailureCause(error);
  if (certificateFix === undefined || !isCertificateProblem(`${code ?? ""} ${message}`)) {
    return { error: message };
  }
  return { error: `${message}: ${certificateFix}`, fatal: true };
}

/**
 * The answer's body for a report: JSON when it parses, else the text (cut at 2,000 characters),
 * else undefined. A body cut off at {@link maxAnswerBytes} (`complete` false) is its text's
 * start, marked so.
 */
export function parseBody(text: string, complete = true): JsonValue | undefined {
  if (!complete) {
    return `${text.slice(0, maxBodyText)}… (cut off: the answer is longer than ${maxAnswerBytes} bytes)`;
  }
  if (text === "") return undefined;
  try {
    // JSON.parse defines `__proto__` as an own, plain key: no prototype is touched.
    return JSON.parse(text) as JsonValue;
  } catch {
    return text.length > maxBodyText ? `${text.slice(0, maxBodyText)}…` : text;
  }
}

/** Milliseconds since the call, to a tenth: every answer's `durationMs`. */
export function stopwatch(): () => number {
  const started = performance.now();
  return () => Math.round((performance.now() - started) * 10) / 10;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
