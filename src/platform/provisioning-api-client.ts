import type { JsonValue } from "type-fest";
import { readFailureCause } from "../internal/failure-cause.ts";
import { readCappedText } from "../internal/read-capped-text.ts";
import { joinUrl, normalizeBaseUrl } from "../internal/url.ts";

/**
 * An application's Provisioning API called in-process, without a socket: anything with the
 * Fetch API's handler shape, such as the SDK's provisioning handler.
 */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

/**
 * Where the Provisioning API is: its base URL, as the platform's `provisioner` setting holds it
 * (`http://10.0.0.5:3000`, or with a path: `https://host/ldap/auth`), or a handler called in-process.
 */
export type ProvisioningTarget = string | URL | FetchHandler;

/** One call to the Provisioning API. `path` starts with `/v1/` and is already percent-encoded. */
export interface ProvisioningCall {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** The request body, sent as `application/json`. */
  body?: string;
}

/**
 * What came back: a status and the parsed body (JSON when it parses, else the text, else
 * undefined when empty), or `error` when no answer arrived (network error, time-out, abort), with
 * `fatal` when retrying cannot fix it (the application's certificate is not trusted).
 */
export type ProvisioningAnswer = (
  | {
      status: number;
      body: JsonValue | undefined;
      error?: undefined;
      timedOut?: undefined;
    }
  | {
      status?: undefined;
      body?: undefined;
      error: string;
      fatal?: true;
      /** Set when no answer came within the time-out. */
      timedOut?: true;
    }
) & {
  durationMs: number;
  /**
   * The answers to copies of this same request delivered just before it, oldest first: a
   * transport that delivers at least once may send a request more than once, as the platform
   * does. The delivery engine counts each copy as an attempt and reports each success. Absent
   * for a request sent once, as the SDK's own clients send it.
   */
  copies?: ProvisioningAnswer[];
};

/** Sends one request and resolves with the answer; it never rejects. */
export type ProvisioningApiClient = (
  request: ProvisioningCall,
  signal?: AbortSignal,
) => Promise<ProvisioningAnswer>;

// A handler sees requests for this origin; only the path matters to it.
const inProcessOrigin = "http://localhost";
// Error bodies are for a human to read; a runaway one must not flood a report.
const maxBodyText = 2000;

/**
 * How much of an application's answer the platform's clients read: the body is for a report (an
 * error's reason), and a server that sends a runaway body must not exhaust the sender's memory.
 * Past it the answer is cut off and reported as text.
 */
export const maxAnswerBytes = 64 * 1024;

/**
 * Makes the client on fetch, for every runtime: the simulator's, the conformance suite's, and the
 * directory sync's for a handler called in-process. Plain fetch, no retries, every status returned
 * as it is, because the exact status is what they judge.
 */
export function connectProvisioning(
  target: ProvisioningTarget,
  { timeoutMs }: { timeoutMs: number },
): ProvisioningApiClient {
  const handler = typeof target === "object" && !(target instanceof URL) ? target : undefined;
  const base = handler ? inProcessOrigin : parseBaseUrl(target as string | URL);
  const send = handler ? (request: Request) => handler.fetch(request) : fetch;
  return async (request, signal) => {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    const timeout = AbortSignal.timeout(timeoutMs);
    const abort = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const exchange = (async () => {
        const response = await send(
          new Request(joinUrl(base, request.path), {
            method: request.method,
            signal: abort,
            ...(request.body === undefined
              ? {}
              : { body: request.body, headers: { "content-type": "application/json" } }),
          }),
        );
        const { body, complete } = await readCappedText(response, maxAnswerBytes, abort);
        return { status: response.status, text: body, complete };
      })();
      // A handler called in-process may ignore the request's signal; the race keeps the time-out.
      const { status, text, complete } = await raceAbort(exchange, abort);
      return { status, body: parseBody(text, complete), durationMs: elapsed() };
    } catch (error) {
      return {
        error: describeFailure(error, abort, timeoutMs),
        ...(timeout.aborted && !signal?.aborted && { timedOut: true as const }),
        durationMs: elapsed(),
      };
    }
  };
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function parseBaseUrl(target: string | URL): string {
  try {
    // The platform appends /v1/... to the provisioner URL, whatever path it carries.
    return normalizeBaseUrl(target);
  } catch (error) {
    throw new TypeError(`The Provisioning API's URL ${(error as Error).message}`);
  }
}

/**
 * The answer's body: JSON when it parses, else the text (cut at 2,000 characters), else undefined.
 * A body cut off at {@link maxAnswerBytes} (`complete` false) is its text's start, marked so.
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

function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) {
    return signal.reason instanceof DOMException && signal.reason.name === "TimeoutError"
      ? `no answer within ${timeoutMs} ms`
      : "aborted";
  }
  return readFailureCause(error).message;
}
