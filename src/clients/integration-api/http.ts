// The Integration API's one HTTP layer: one call is attempts under the shared retry loop, each
// bounded by its time-out, redirects refused, the answer read under maxResponseBytes, every failure
// mapped to the error family.
import { isCertificateProblem } from "../../internal/certificate-problem.ts";
import { readFailureCause } from "../../internal/failure-cause.ts";
import { packageVersion } from "../../internal/package-version.ts";
import { readCappedText } from "../../internal/read-capped-text.ts";
import { joinUrl } from "../../internal/url.ts";
import { resolveBaseUrl } from "./base-url.ts";
import {
  type CallOptions,
  duration,
  type IntegrationApiOptions,
  type NormalizedOptions,
  normalizeOptions,
} from "./client-options.ts";
import {
  apiTitles,
  CallTimeoutError,
  ConfigurationError,
  HttpError,
  isHttpError,
  isPlatformApiError,
  NetworkError,
  type PlatformApiError,
  type PlatformApiKind,
  ResponseShapeError,
} from "./errors.ts";
import { retryDelayMs, retryLoop } from "./retry-policy.ts";
import { selectFetch } from "./runtime-fetch.ts";
import { createClientTelemetry } from "./telemetry.ts";
import { maxTimerMs } from "./timers.ts";

/** A 2xx answer of the Integration API, its body read as text. */
export interface ApiResponse {
  method: string;
  /** The request URL, credentials removed. */
  url: string;
  status: number;
  headers: Headers;
  body: string;
  /** The API that answered, which a `ResponseShapeError` built from this answer names. */
  api?: PlatformApiKind;
}

/** What a request needs beyond {@link CallOptions}. */
export interface RequestOptions extends CallOptions {
  /** A JSON body, already serialized. */
  json?: string;
  /** A body that is not JSON (a support bundle), sent with a Content-Length and its type. */
  bytes?: { data: Uint8Array<ArrayBuffer> | Blob; contentType: string };
  /** Whether the client's retry settings apply; false for calls that must not run twice. */
  retry: boolean;
  /**
   * Reads an error answer that this endpoint uses for a transient failure, though its status
   * says otherwise: what it means, for the error's message; the error is then retryable.
   */
  transient?: ((status: number, body: string) => string | undefined) | undefined;
  /**
   * When the call's `totalTimeoutMs` runs out (`performance.now()` time), where the call began
   * before this request: "auto"'s probe of `GET /healthz` counts against the call it precedes.
   */
  deadline?: number | undefined;
}

/** The HTTP layer that every Integration API client shares. */
export interface IntegrationApi {
  readonly options: NormalizedOptions;
  /**
   * Sends one call, retrying it (when `retry` is true) under the retry policy; resolves with a
   * 2xx answer, rejects with an error of the package's family or the caller's abort reason.
   */
  request(
    method: "GET" | "PUT" | "POST" | "PATCH" | "DELETE",
    path: string,
    options: RequestOptions,
  ): Promise<ApiResponse>;
}

const userAgent = `platform-integration/${packageVersion}`;
const jsonHeaders = { accept: "application/json", "user-agent": userAgent };
const jsonBodyHeaders = { ...jsonHeaders, "content-type": "application/json" };

/** Why an attempt was cut short by the client itself, told apart from the caller's abort. */
class AttemptTimeout extends Error {}

/**
 * Builds the HTTP layer once from its options, on the runtime's fetch: each call resolves the
 * base URL at call time, never follows a redirect (a 3xx is a failed call: following it would
 * turn an audit POST into a GET), bounds each attempt by `timeoutMs` and the whole call by
 * `totalTimeoutMs`, retries under the retry policy, and maps every failure to the package's
 * error family. `api` (default `"integration"`) is the API behind the base URL, which the errors'
 * messages name with what to check; `address`, where the address came from when the messages
 * must say more than that API's usual source.
 */
export function createIntegrationApi(
  input?: IntegrationApiOptions,
  api: PlatformApiKind = "integration",
  address?: string,
): IntegrationApi {
  const options = normalizeOptions(input, api);
  const injectedFetch = selectFetch(options);
  const telemetry = createClientTelemetry();

  /** One attempt: the answer whatever its status, or the error of a failure to get one. */
  async function attempt(
    method: string,
    url: string,
    json: string | RequestOptions["bytes"],
    signal: AbortSignal | undefined,
    timeoutMs: number,
    resendCount: number,
  ): Promise<{ status: number; headers: Headers; body: string; complete: boolean }> {
    signal?.throwIfAborted();
    const finishSpan = telemetry.startAttempt(method, url, resendCount);
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new AttemptTimeout()),
      Math.min(timeoutMs, maxTimerMs),
    );
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const init: RequestInit = {
        method,
        headers:
          json === undefined
            ? jsonHeaders
            : typeof json === "string"
              ? jsonBodyHeaders
              : { ...jsonHeaders, "content-type": json.contentType },
        redirect: "manual",
        signal: controller.signal,
        ...(json === undefined ? {} : { body: typeof json === "string" ? json : json.data }),
      };
      // An injected fetch gets a Request, the one shape it has to handle; the global fetch gets
      // the parts, which spares building the Request twice. Resolving globalThis.fetch per call
      // keeps interceptors installed later (msw) working.
      const response = await (injectedFetch === undefined
        ? globalThis.fetch(url, init)
        : injectedFetch(new Request(url, init)));
      const { body, complete } = await readCappedText(
        response,
        options.maxResponseBytes,
        controller.signal,
      );
      finishSpan?.({ status: response.status });
      return { status: response.status, headers: response.headers, body, complete };
    } catch (error) {
      finishSpan?.({ error });
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  return {
    options,
    async request(
      method,
      path,
      {
        signal,
        timeoutMs,
        json: text,
        bytes,
        retry: retried,
        transient: readTransient,
        deadline: givenDeadline,
      },
    ) {
      const json = bytes ?? text;
      const base = resolveBaseUrl(options.baseUrl);
      if (options.tls !== undefined && base.startsWith("http:")) {
        throw new ConfigurationError(
          `The tls option applies to https: URLs, but the base URL of ${apiTitles[api]} is ${base}: use its https: URL, or remove the tls option.`,
        );
      }
      // The base URL cannot hold credentials (resolveBaseUrl refuses them): no redaction needed.
      const url = joinUrl(base, path);
      const attemptTimeoutMs = duration("timeoutMs", timeoutMs, options.timeoutMs);
      const deadline = givenDeadline ?? performance.now() + options.totalTimeoutMs;
      const limit = retried ? options.retry.limit : 0;
      const context = { method, url, api, address };

      /** One attempt: a 2xx answer, or the error of the package's family it came to. */
      const once = async (attempts: number): Promise<ApiResponse> => {
        let answer: Awaited<ReturnType<typeof attempt>>;
        try {
          const remaining = deadline - performance.now();
          answer = await attempt(
            method,
            url,
            json,
            signal,
            Math.min(attemptTimeoutMs, remaining),
            attempts - 1,
          );
        } catch (caught) {
          // An abort by the caller is theirs, not a failure of the API: it surfaces as its reason.
          if (signal?.aborted) throw signal.reason;
          throw toPlatformError(caught, {
            ...context,
            attempts,
            timeoutMs: attemptTimeoutMs,
            totalTimeoutMs: options.totalTimeoutMs,
            tls: options.tls !== undefined,
          });
        }
        const { complete, ...received } = answer;
        if (received.status < 200 || received.status >= 300) {
          const transient = readTransient?.(received.status, received.body);
          throw new HttpError({ ...context, attempts, transient, ...received });
        }
        if (!complete) {
          throw new ResponseShapeError(
            { ...context, ...received },
            `it is longer than maxResponseBytes (${options.maxResponseBytes} bytes) and was cut off there (raise maxResponseBytes if such an answer is legitimate)`,
          );
        }
        return { method, url, api, ...received };
      };

      /** The wait before the next attempt, or undefined when this failure ends the call. */
      const next = (error: unknown, attempts: number): number | undefined => {
        if (!isPlatformApiError(error) || !error.retryable || attempts > limit) return undefined;
        const delay = retryDelayMs(isHttpError(error) ? error : undefined, attempts, options.retry);
        if (performance.now() + delay >= deadline) return undefined;
        options.logger.debug(
          `platform-integration: ${error.message} Retrying in ${Math.round(delay)} ms (retry ${attempts} of ${limit}).`,
          { method, url, attempts, delayMs: Math.round(delay) },
        );
        return delay;
      };

      // A call in flight keeps the process alive through its backoff, as its socket does: a
      // script that awaits it at the top level must see it settle, not exit mid-retry.
      return retryLoop(once, next, { signal, keepAlive: true });
    },
  };
}

function toPlatformError(
  error: unknown,
  context: {
    method: string;
    url: string;
    attempts: number;
    api: PlatformApiKind;
    address: string | undefined;
    timeoutMs: number;
    totalTimeoutMs: number;
    tls: boolean;
  },
): PlatformApiError {
  if (isPlatformApiError(error)) return error;
  const { method, url, attempts, api, address } = context;
  if (error instanceof AttemptTimeout || (error as { name?: unknown })?.name === "TimeoutError") {
    return new CallTimeoutError(context);
  }
  const { code, message } = readFailureCause(error);
  const reason = code ?? message;
  if (isCertificateProblem(reason)) {
    return new ConfigurationError(
      `${method} ${url} failed: the Integration API's certificate is not trusted (${reason}). ${
        context.tls
          ? "The certificate in tls.ca does not verify it: pass the platform's current CA certificate."
          : "Pass tls: { ca } with the platform's CA certificate (PEM text; when it comes from an environment variable such as PLATFORM_CA, check that the variable is set)."
      } The platform's console holds it as its tls.authority.cert option; \`platform-integration mock-api --https --cert-out FILE\` writes the fake's. tls: { rejectUnauthorized: false } skips verification, which also trusts an attacker's server.`,
      { cause: error },
    );
  }
  // Whatever else fetch or an injected fetch throws, or a body cut off mid-read, is a failure
  // to reach the API.
  return new NetworkError({ method, url, attempts, api, address }, error);
}
