import ky, {
  isHTTPError,
  isKyError,
  isNetworkError as isKyNetworkError,
  isTimeoutError as isKyTimeoutError,
  type Options,
} from "ky";
import { redactUrl, resolveBaseUrl } from "./base-url.ts";
import { HttpError, isPlatformApiError, NetworkError, TimeoutError } from "./errors.ts";
import {
  type CallOptions,
  duration,
  type IntegrationApiOptions,
  type NormalizedOptions,
  normalizeOptions,
} from "./options.ts";
import { selectFetch } from "./runtime-fetch.ts";

/** A 2xx answer of the Integration API, its body read as text. */
export interface ApiResponse {
  method: string;
  /** The request URL, credentials removed. */
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

/** What a request needs beyond {@link CallOptions}. */
export interface RequestOptions extends CallOptions {
  /** A JSON body, already serialized. */
  json?: string;
  /** Whether the client's retry settings apply; false for calls that must not run twice. */
  retry: boolean;
}

/** The HTTP layer that the Version and Audit clients share. */
export interface IntegrationApi {
  readonly options: NormalizedOptions;
  request(
    method: "GET" | "PUT" | "POST",
    path: string,
    options: RequestOptions,
  ): Promise<ApiResponse>;
}

const userAgent = `platform-integration/${__SDK_VERSION__}`;
// ky's own list stops at 504; the contract is every 5xx, plus 408 and 429.
const retryStatuses = [408, 429, ...Array.from({ length: 100 }, (_, index) => 500 + index)];
const maxTimer = 2_147_483_647;
const attemptCounts = new WeakMap<Error, number>();

/**
 * Builds the client once from its options: ky with the SDK's headers, timeouts and retry policy
 * (GET only: exponential backoff, full jitter, Retry-After honoured up to a cap). Each request
 * resolves the base URL at call time and maps every failure to the package's error family.
 */
export function createIntegrationApi(input?: IntegrationApiOptions): IntegrationApi {
  const options = normalizeOptions(input);
  const fetch = selectFetch(options);
  const { retry } = options;
  const api = ky.create({
    headers: { accept: "application/json", "user-agent": userAgent },
    // ky always calls fetch with a Request, which is all an injected fetch has to handle.
    ...(fetch === undefined ? {} : { fetch: fetch as NonNullable<Options["fetch"]> }),
    timeout: Math.min(options.timeoutMs, maxTimer),
    totalTimeout: Number.isFinite(options.totalTimeoutMs)
      ? Math.min(options.totalTimeoutMs, maxTimer)
      : false,
    retry: {
      limit: retry.limit,
      methods: ["get"],
      statusCodes: retryStatuses,
      afterStatusCodes: [429, 503],
      delay: (attempt) => retry.baseDelayMs * 2 ** (attempt - 1),
      backoffLimit: retry.maxDelayMs,
      jitter: true,
      maxRetryAfter: retry.maxRetryAfterMs,
      retryOnTimeout: true,
    },
    // ky parses JSON error bodies into error.data; keeping the text lets HttpError carry it as received.
    parseJson: (text) => text,
    hooks: {
      beforeError: [
        ({ error, retryCount }) => {
          attemptCounts.set(error, retryCount + 1);
          return error;
        },
      ],
    },
  });

  return {
    options,
    async request(method, path, { signal, timeoutMs, json, retry: retried }) {
      const url = `${resolveBaseUrl(options.baseUrl)}${path}`;
      const attemptTimeout = duration("timeoutMs", timeoutMs, options.timeoutMs);
      try {
        const pending = api(url, {
          method,
          ...(json === undefined
            ? {}
            : { body: json, headers: { "content-type": "application/json" } }),
          ...(signal === undefined ? {} : { signal }),
          timeout: Math.min(attemptTimeout, maxTimer),
          ...(retried ? {} : { retry: { limit: 0 } }),
        });
        const body = await pending.text();
        const { status, headers } = await pending;
        return { method, url: redactUrl(url), status, headers, body };
      } catch (error) {
        throw toPlatformError(error, {
          method,
          url: redactUrl(url),
          signal,
          timeoutMs: attemptTimeout,
          totalTimeoutMs: options.totalTimeoutMs,
        });
      }
    },
  };
}

function toPlatformError(
  error: unknown,
  context: {
    method: string;
    url: string;
    signal: AbortSignal | undefined;
    timeoutMs: number;
    totalTimeoutMs: number;
  },
): unknown {
  // An abort by the caller is theirs, not a failure of the API: it surfaces as the signal's reason.
  if (context.signal?.aborted || isPlatformApiError(error)) return error;
  const details = {
    method: context.method,
    url: context.url,
    attempts: (error instanceof Error && attemptCounts.get(error)) || 1,
  };
  if (isHTTPError(error)) {
    const { status, headers } = error.response;
    return new HttpError({
      ...details,
      status,
      headers,
      body: typeof error.data === "string" ? error.data : "",
    });
  }
  if (isKyTimeoutError(error)) {
    return new TimeoutError({
      ...details,
      timeoutMs: context.timeoutMs,
      totalTimeoutMs: context.totalTimeoutMs,
    });
  }
  // Errors ky does not recognise (a custom fetch's, a body cut off mid-read) are still failures to reach the API.
  return new NetworkError(
    details,
    isKyNetworkError(error) || isKyError(error) ? error.cause : error,
  );
}
