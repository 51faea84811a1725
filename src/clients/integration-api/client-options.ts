// The clients' options, normalized once: time-outs, retry policy, TLS, logger, answer cap.
import { type Logger, resolveLogger } from "../../internal/logger.ts";
import { pemCertificates } from "../../internal/pem.ts";
import type { RetryPolicy } from "./retry-policy.ts";

/**
 * How to verify the Integration API's certificate. The platform serves the API over HTTPS with a
 * self-signed certificate, so one of the two is usually needed.
 *
 * Supported on Node and Deno (through a keep-alive node:https agent; Deno needs `--allow-sys` for
 * `rejectUnauthorized: false`) and on Bun (its fetch's `tls` option). Elsewhere (Workers), inject
 * a `fetch` that trusts the certificate.
 */
export interface TlsOptions {
  /** PEM certificate(s) to trust, in addition to the runtime's roots: the platform's certificate. */
  ca?: string | string[] | undefined;
  /**
   * `false` accepts any certificate, which also accepts an attacker's: prefer `ca`. Default true.
   */
  rejectUnauthorized?: boolean | undefined;
}

/**
 * Retry settings, one policy for every client: network errors, time-outs, 408, 429, 5xx and 3xx
 * (redirects are never followed) are retried; other answers and configuration errors are not.
 * The wait is full jitter over an exponential backoff, or the server's Retry-After on a 429 or 503.
 */
export interface RetryOptions {
  /**
   * Retries after the first attempt. For the clients' GET calls (Version, Identity, License,
   * Console): how often a retryable failure is retried; calls that must not run twice (a PUT such
   * as `apply()`, a POST such as `login()`) are never retried. For audit delivery (in memory, on
   * the spool or on pg-boss): how often a redirected event is retried before it is dropped;
   * outages are retried until the event is delivered. Default 2.
   */
  limit?: number | undefined;
  /** The delay before the first retry, doubled for each next one (then jittered). Default 300. */
  baseDelayMs?: number | undefined;
  /** The longest computed delay between attempts. Default 10,000. */
  maxDelayMs?: number | undefined;
  /**
   * The longest Retry-After of a 429 or 503 answer that is honoured (delay-seconds, or an HTTP
   * date such as `Sun, 06 Nov 1994 08:49:37 GMT`); a longer one waits this long. Default 30,000.
   */
  maxRetryAfterMs?: number | undefined;
}

/** Options of the Integration API clients; each is read once, when the client is created. */
export interface IntegrationApiOptions {
  /**
   * The Integration API's base URL: scheme, host and port, without a path (the platform's never
   * has one; a path is refused with a `ConfigurationError`). Default: the PLATFORM_INTEGRATIONAPI
   * environment variable, read at each call.
   */
  baseUrl?: string | URL | undefined;
  /**
   * The fetch to call, on any runtime: for tests, instrumentation, or TLS settings the `tls`
   * option cannot express. Cannot be combined with `tls`.
   */
  fetch?: ((input: Request, init?: RequestInit) => Promise<Response>) | undefined;
  /**
   * Certificate verification for an HTTPS base URL; see {@link TlsOptions} for each runtime.
   * `{ ca: undefined }` (an unset environment variable) is the same as no `tls`; `tls` with an
   * `http:` base URL is a `ConfigurationError`.
   */
  tls?: TlsOptions | undefined;
  /**
   * The longest wait for an answer to one attempt, in milliseconds. Default 10,000 on the
   * Integration API and the admin console; 30,000 on the newer in-cluster service, whose own
   * calls to the vendor time out at 10 s each (up to two per request, for the pending updates)
   * before it answers from its cache: a shorter time-out would abort just before that cached
   * answer (`fromCache: true`) and turn it into an error.
   */
  timeoutMs?: number | undefined;
  /**
   * The longest wait for one call, retries, their delays and the reading of answers included.
   * Default 30,000; 60,000 on the newer in-cluster service (one full attempt and a retry).
   */
  totalTimeoutMs?: number | undefined;
  /**
   * The largest answer read, in bytes, counted while it streams: a longer one is cut off there
   * (a 2xx then rejects with a `ResponseShapeError`, an error status keeps the part read on
   * `error.body`), so that a broken or hostile server cannot fill the application's memory.
   * Default 4 MiB (4,194,304); raise it if a legitimate answer of yours is larger.
   */
  maxResponseBytes?: number | undefined;
  /** Retry settings. */
  retry?: RetryOptions | undefined;
  /**
   * Where the client reports what it does (retries at `debug`, failures that stop delivery at
   * `error`): console, pino, winston. Default: warnings and errors on the console.
   */
  logger?: Logger | undefined;
}

/** Options accepted by each call. */
export interface CallOptions {
  /** Aborts the call; it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's per-attempt timeout for this call. */
  timeoutMs?: number | undefined;
}

export interface NormalizedOptions {
  baseUrl: string | URL | undefined;
  fetch: ((input: Request, init?: RequestInit) => Promise<Response>) | undefined;
  /** Undefined when the given `tls` changes nothing (no CA, verification on). */
  tls: TlsOptions | undefined;
  timeoutMs: number;
  totalTimeoutMs: number;
  maxResponseBytes: number;
  retry: RetryPolicy;
  logger: Logger;
}

/**
 * The time-outs of each API when the options name none. The newer service's calls to the vendor
 * time out at 10 s, up to two per request (`pkg/util/http_client.go`), after which it answers
 * from its cache: its clients wait 30 s per attempt, so that the cached answer arrives.
 */
export const defaultTimeouts: Record<
  "integration" | "sdk" | "kots",
  { timeoutMs: number; totalTimeoutMs: number }
> = {
  integration: { timeoutMs: 10_000, totalTimeoutMs: 30_000 },
  sdk: { timeoutMs: 30_000, totalTimeoutMs: 60_000 },
  kots: { timeoutMs: 10_000, totalTimeoutMs: 30_000 },
};

/**
 * Validates the options once, with messages that name the option; `api` picks the default
 * time-outs ({@link defaultTimeouts}).
 */
export function normalizeOptions(
  options: IntegrationApiOptions = {},
  api: keyof typeof defaultTimeouts = "integration",
): NormalizedOptions {
  const timeouts = defaultTimeouts[api];
  const { baseUrl, fetch, retry = {} } = options;
  if (fetch !== undefined && typeof fetch !== "function") {
    throw new TypeError("The fetch option must be a function.");
  }
  const tls = normalizeTls(options.tls);
  return {
    baseUrl,
    fetch,
    tls,
    timeoutMs: duration("timeoutMs", options.timeoutMs, timeouts.timeoutMs),
    totalTimeoutMs: duration(
      "totalTimeoutMs",
      options.totalTimeoutMs,
      timeouts.totalTimeoutMs,
      true,
    ),
    maxResponseBytes: atLeastOne("maxResponseBytes", options.maxResponseBytes, 4 * 1024 * 1024),
    logger: resolveLogger(options.logger),
    retry: {
      limit: count("retry.limit", retry.limit, 2),
      baseDelayMs: duration("retry.baseDelayMs", retry.baseDelayMs, 300),
      maxDelayMs: duration("retry.maxDelayMs", retry.maxDelayMs, 10_000),
      maxRetryAfterMs: duration("retry.maxRetryAfterMs", retry.maxRetryAfterMs, 30_000),
    },
  };
}

function normalizeTls(tls: TlsOptions | undefined): TlsOptions | undefined {
  if (tls === undefined) return undefined;
  const cas = pemCertificates(tls.ca, "tls.ca");
  if (tls.rejectUnauthorized !== undefined && typeof tls.rejectUnauthorized !== "boolean") {
    throw new TypeError("tls.rejectUnauthorized must be a boolean.");
  }
  // `{ ca: process.env.PLATFORM_CA }` with the variable unset asks for nothing: the defaults.
  if (cas.length === 0 && tls.rejectUnauthorized !== false) return undefined;
  return {
    ...(cas.length === 0 ? {} : { ca: cas }),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  };
}

/** A non-negative number of milliseconds, or the default; Infinity only where `unbounded`. */
export function duration(
  name: string,
  value: number | undefined,
  fallback: number,
  unbounded = false,
) {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 0) || (!unbounded && !Number.isFinite(value))) {
    throw new TypeError(
      `${name} must be a non-negative number of milliseconds, got ${String(value)}.`,
    );
  }
  return value;
}

/** A non-negative integer, or the default. */
export function count(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer, got ${String(value)}.`);
  }
  return value;
}

/** A positive integer, or the default. */
export function atLeastOne(name: string, value: number | undefined, fallback: number): number {
  const result = count(name, value, fallback);
  if (result < 1) throw new TypeError(`${name} must be at least 1.`);
  return result;
}
