// The package's error family (ky's model): one base class, typed errors with what to check, and
// type guards that recognise another copy's errors.
// The brand is a registered symbol so that the type guards recognise errors thrown by another copy
// of this package (its ESM and CJS builds loaded in one process, or two installed versions), where
// `instanceof` would answer false.
import { readFailureCause } from "../../internal/failure-cause.ts";
import { redactUrl } from "../../internal/url.ts";
import { isRetryableStatus } from "./retry-policy.ts";

const brand = Symbol.for("platform-integration.error");

type ErrorKind =
  | "configuration"
  | "read-only"
  | "http"
  | "network"
  | "timeout"
  | "response-shape"
  | "unsupported-operation";

/** Marks `error` with its kind, which the guards read; kept out of the public constructors. */
function mark(error: PlatformApiError, kind: ErrorKind): void {
  // Configurable, so that a subclass (ReadOnlyModeError) marks itself after its base did.
  Object.defineProperty(error, brand, { value: kind, configurable: true });
}

/** What the Integration API client knows about a request that failed. */
export interface RequestDetails {
  /** The HTTP method, upper case. */
  method: string;
  /** The request URL, with any user name and password removed. */
  url: string;
  /** How many attempts were made, retries included. */
  attempts: number;
  /**
   * Which API the client talks to, so that the message names what to check in that mode
   * (default `"integration"`).
   */
  api?: PlatformApiKind | undefined;
  /** Where the address came from, when the messages must say more than the API's usual source. */
  address?: string | undefined;
}

/**
 * The base of every error the platform's clients throw or report (Version, Audit and
 * `createPgBossAudit`, Identity, License, Console, App). Use the type guards
 * (`isPlatformApiError`, `isHttpError`, ...) rather than `instanceof`: they also recognise errors
 * from another copy of the package loaded in the same process.
 */
export abstract class PlatformApiError extends Error {
  /**
   * Whether the same request may succeed if sent again later: true for network errors,
   * time-outs, 408, 429 and 5xx; false for a configuration error, another status or a body this
   * client cannot read.
   */
  abstract readonly retryable: boolean;
}

/**
 * The client cannot make a request as configured: no base URL, options that contradict each
 * other (`tls` with an `http:` URL), or a server certificate that does not verify against the
 * trusted CAs. The message names the fix; retrying does not help.
 */
export class ConfigurationError extends PlatformApiError {
  override readonly name: string = "ConfigurationError";
  readonly retryable = false;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    mark(this, "configuration");
  }
}

/**
 * The newer in-cluster API runs in read-only mode (its Helm value `readOnlyMode`) and refused a
 * write with 422: nothing was stored and nothing was sent upstream. It refuses so the DELETE of
 * a custom metric, instance tags and support bundle metadata; POST and PATCH of custom metrics
 * are taken without a 422 (nothing stored, still sent upstream). Retrying cannot help, so it
 * is never retried; `isConfigurationError` also recognises it. The fix is the service's
 * configuration, or leaving the write out when `readOnlyMode` is intended.
 */
export class ReadOnlyModeError extends ConfigurationError implements RequestDetails {
  override readonly name = "ReadOnlyModeError";
  readonly method: string;
  readonly url: string;
  readonly attempts: number;
  /** The service's own message (`error` of its 422 body). */
  readonly serviceMessage: string;

  constructor(details: RequestDetails & { serviceMessage: string }) {
    const { method, url, serviceMessage } = details;
    super(
      `${method} ${url} was refused: the platform's SDK service runs in read-only mode (readOnlyMode${serviceMessage === "" ? "" : `: ${serviceMessage}`}), which refuses this write. Turn readOnlyMode off in the service's Helm values, or skip this write in read-only installs.`,
    );
    mark(this, "read-only");
    this.method = method;
    this.url = url;
    this.attempts = details.attempts;
    this.serviceMessage = serviceMessage;
  }
}

/** Which of the platform's APIs a client talks to; see the clients' `api` option. */
export type PlatformApiKind = "integration" | "sdk" | "kots";

/**
 * The selected API cannot serve this call: rejected at once, without a request (the client's
 * `capabilities` says so beforehand), or after the service answered 404 because its version
 * predates the endpoint (`requestSent` is then true). The message names the API and the
 * alternative; retrying does not help.
 */
export class UnsupportedOperationError extends PlatformApiError {
  override readonly name = "UnsupportedOperationError";
  readonly retryable = false;
  /** The API the client was configured for. */
  readonly api: PlatformApiKind;
  /** The call, as `client.method` (`version.apply`). */
  readonly operation: string;
  /** What to do instead. */
  readonly alternative: string;
  /** Whether a request was sent (only when an older service answered 404). */
  readonly requestSent: boolean;

  constructor(
    details: { api: PlatformApiKind; operation: string; alternative: string; reason?: string },
    requestSent = false,
  ) {
    const { api, operation, alternative } = details;
    super(
      `${operation}() is not available on ${apiTitles[api]}${details.reason === undefined ? "" : ` (${details.reason})`}. ${alternative}`,
    );
    mark(this, "unsupported-operation");
    this.api = api;
    this.operation = operation;
    this.alternative = alternative;
    this.requestSent = requestSent;
  }
}

/** How error messages name each API. */
export const apiTitles: Record<PlatformApiKind, string> = {
  integration: "the platform's Integration API",
  sdk: "the platform's newer in-cluster SDK API",
  kots: "the admin console's compatibility license endpoint",
};

/**
 * Where each API's address comes from, as messages tell the user to check it: the variable and
 * defaults that src/clients/sdk-api/api-selection.ts reads.
 */
const addressSources: Record<PlatformApiKind, string> = {
  integration: "PLATFORM_INTEGRATIONAPI",
  sdk: "the baseUrl option (else PLATFORM_SDK_API, else http://replicated:3000)",
  kots: "the baseUrl option (else http://kotsadm:3000)",
};

/** The short names of the APIs in the advice of a message. */
const shortTitles: Record<PlatformApiKind, string> = {
  integration: "the Integration API",
  sdk: "the platform's SDK service",
  kots: "the admin console",
};

function addressOf(api: PlatformApiKind | undefined, address?: string): string {
  return address ?? addressSources[api ?? "integration"];
}

function titleOf(api: PlatformApiKind | undefined): string {
  return shortTitles[api ?? "integration"];
}

/** The Integration API answered with a status outside 2xx, after any retries. */
export class HttpError extends PlatformApiError implements RequestDetails {
  override readonly name = "HttpError";
  readonly retryable: boolean;
  readonly method: string;
  readonly url: string;
  readonly attempts: number;
  /** The HTTP status of the last answer. */
  readonly status: number;
  /** The response headers of the last answer. */
  readonly headers: Headers;
  /** The response body of the last answer, as text (empty when there was none). */
  readonly body: string;

  constructor(
    details: RequestDetails & {
      status: number;
      headers: Headers;
      body: string;
      /** What this answer means where the API gives its status a meaning of its own. */
      transient?: string | undefined;
    },
  ) {
    const { method, url, attempts, status, transient } = details;
    super(
      `${method} ${url} answered ${status}${attemptsText(attempts)}. ${transient ?? hint(status, details.headers, details.api, details.address)}`,
    );
    mark(this, "http");
    this.retryable = transient !== undefined || isRetryableStatus(status);
    this.method = method;
    this.url = url;
    this.attempts = attempts;
    this.status = status;
    this.headers = details.headers;
    this.body = details.body;
  }
}

/** No answer came: the connection was refused or reset, or DNS failed. */
export class NetworkError extends PlatformApiError implements RequestDetails {
  override readonly name = "NetworkError";
  readonly retryable = true;
  readonly method: string;
  readonly url: string;
  readonly attempts: number;

  constructor(details: RequestDetails, cause: unknown) {
    const { method, url, attempts } = details;
    const { code, message } = readFailureCause(cause);
    const reason = code ?? message;
    super(
      `${method} ${url} failed before an answer${reason ? ` (${reason})` : ""}${attemptsText(attempts)}. Check ${addressOf(details.api, details.address)} and that ${titleOf(details.api)} is reachable from here.`,
      { cause },
    );
    mark(this, "network");
    this.method = method;
    this.url = url;
    this.attempts = attempts;
  }
}

/**
 * No complete answer came within the per-attempt or the total timeout. Named apart from the
 * DOMException `TimeoutError` of `AbortSignal.timeout()`: a caller's own signal rejects with
 * that one, unchanged, and `isCallTimeoutError` tells the two apart.
 */
export class CallTimeoutError extends PlatformApiError implements RequestDetails {
  override readonly name = "CallTimeoutError";
  readonly retryable = true;
  readonly method: string;
  readonly url: string;
  readonly attempts: number;

  constructor(details: RequestDetails & { timeoutMs: number; totalTimeoutMs: number }) {
    const { method, url, attempts, timeoutMs, totalTimeoutMs } = details;
    const limits = `${timeoutMs} ms per attempt${Number.isFinite(totalTimeoutMs) ? `, ${totalTimeoutMs} ms in total` : ""}`;
    // An update (PUT /version/v1/:sequence) that timed out may still be running on the platform:
    // say so rather than invite a retry.
    const advice =
      method === "PUT" && url.includes("/version/v1/")
        ? "The platform may still be applying it: check the current version before trying again."
        : `Check that ${titleOf(details.api)} is reachable, or raise timeoutMs / totalTimeoutMs.`;
    super(`${method} ${url} timed out (${limits})${attemptsText(attempts)}. ${advice}`);
    mark(this, "timeout");
    this.method = method;
    this.url = url;
    this.attempts = attempts;
  }
}

/** The Integration API answered 2xx with a body this client cannot read; `body` holds it raw. */
export class ResponseShapeError extends PlatformApiError {
  override readonly name = "ResponseShapeError";
  readonly retryable = false;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
  /** The response body, exactly as received. */
  readonly body: string;

  constructor(
    details: {
      method: string;
      url: string;
      status: number;
      headers: Headers;
      body: string;
      api?: PlatformApiKind | undefined;
      address?: string | undefined;
    },
    problem: string,
  ) {
    const { method, url, status } = details;
    super(
      `${method} ${url} answered ${status} with an unexpected body: ${problem}. The raw body is on error.body; check that ${addressOf(details.api, details.address)} points at ${apiTitles[details.api ?? "integration"]}.`,
    );
    mark(this, "response-shape");
    this.method = method;
    this.url = url;
    this.status = status;
    this.headers = details.headers;
    this.body = details.body;
  }
}

function kindOf(value: unknown): ErrorKind | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const kind = (value as { [brand]?: unknown })[brand];
  return typeof kind === "string" ? (kind as ErrorKind) : undefined;
}

/** Whether `value` is any error of this package's Integration API clients. */
export function isPlatformApiError(value: unknown): value is PlatformApiError {
  return kindOf(value) !== undefined;
}

/**
 * Whether `value` is a {@link ConfigurationError} (from any copy of this package), a
 * {@link ReadOnlyModeError} included.
 */
export function isConfigurationError(value: unknown): value is ConfigurationError {
  const kind = kindOf(value);
  return kind === "configuration" || kind === "read-only";
}

/** Whether `value` is a {@link ReadOnlyModeError} (from any copy of this package). */
export function isReadOnlyModeError(value: unknown): value is ReadOnlyModeError {
  return kindOf(value) === "read-only";
}

/**
 * Whether `value` is an {@link UnsupportedOperationError} (from any copy of this package).
 *
 * @example
 * ```ts
 * try {
 *   await version.apply(52);
 * } catch (error) {
 *   if (isUnsupportedOperationError(error)) console.info(error.alternative);
 *   else throw error;
 * }
 * ```
 */
export function isUnsupportedOperationError(value: unknown): value is UnsupportedOperationError {
  return kindOf(value) === "unsupported-operation";
}

/**
 * Whether `value` is an {@link HttpError} (from any copy of this package).
 *
 * @example
 * ```ts
 * try {
 *   await version.apply(52);
 * } catch (error) {
 *   if (isHttpError(error) && error.status === 404) console.warn("no such update", error.body);
 *   else throw error;
 * }
 * ```
 */
export function isHttpError(value: unknown): value is HttpError {
  return kindOf(value) === "http";
}

/** Whether `value` is a {@link NetworkError} (from any copy of this package). */
export function isNetworkError(value: unknown): value is NetworkError {
  return kindOf(value) === "network";
}

/** Whether `value` is a {@link CallTimeoutError} (from any copy of this package). */
export function isCallTimeoutError(value: unknown): value is CallTimeoutError {
  return kindOf(value) === "timeout";
}

/** Whether `value` is a {@link ResponseShapeError} (from any copy of this package). */
export function isResponseShapeError(value: unknown): value is ResponseShapeError {
  return kindOf(value) === "response-shape";
}

function attemptsText(attempts: number): string {
  return attempts > 1 ? ` after ${attempts} attempts` : "";
}

function hint(
  status: number,
  headers: Headers,
  api: PlatformApiKind | undefined,
  address: string | undefined,
): string {
  const title = titleOf(api);
  if (status >= 300 && status < 400) {
    const location = headers.get("location");
    return `It redirects${location === null ? "" : ` to ${redactUrl(location)}`}, which this client never follows (a POST would arrive as a GET, or at another server): point ${addressOf(api, address)} at ${title} itself.`;
  }
  if (isRetryableStatus(status)) {
    return `${capitalize(title)} is overloaded or failing; the call can be retried later.`;
  }
  if (status === 404) {
    return `Check ${addressOf(api, address)}: it must be the base URL of ${title}.`;
  }
  return `${capitalize(title)} rejected the request; its answer is on error.body.`;
}

function capitalize(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
