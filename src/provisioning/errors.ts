// The Provisioning API's error answers: their codes, statuses and JSON body, and the
// ProvisioningError a transform or hook throws to choose its own answer.
import type { ProvisioningResponse } from "./types.ts";

/**
 * The `error` member of every non-2xx answer of the Provisioning API. The set is closed, so that
 * a client (or the platform's operator reading a log) can branch on it:
 *
 * - 400 `invalid_json`, `invalid_user`, `invalid_uuid`: the body or path cannot be a user.
 * - 403 `forbidden`: the `authorize` guard refused the request, or a browser sent it.
 * - 404 `not_found`, 405 `method_not_allowed`: no such route, or not with this method.
 * - 413 `payload_too_large`: the body is larger than the handler's `bodyLimit`.
 * - 415 `unsupported_media_type`: a body parser in front met a charset or encoding it cannot read.
 * - 500 `internal_error`: a hook or the SDK failed unexpectedly, or a body parser in front of the
 *   API made the body unreadable (the `onError` hook sees it).
 * - 503 `not_ready`, `store_unavailable`: retriable; the platform pauses and tries again later.
 */
export type ProvisioningErrorCode =
  | "invalid_json"
  | "invalid_user"
  | "invalid_uuid"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "internal_error"
  | "not_ready"
  | "store_unavailable";

/** The HTTP status of a {@link ProvisioningErrorCode}. */
export type ProvisioningErrorStatus = 400 | 403 | 404 | 405 | 413 | 415 | 500 | 503;

const statusByCode: Readonly<Record<ProvisioningErrorCode, ProvisioningErrorStatus>> = {
  invalid_json: 400,
  invalid_user: 400,
  invalid_uuid: 400,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal_error: 500,
  not_ready: 503,
  store_unavailable: 503,
};

/** The JSON body of every non-2xx answer: what went wrong, never an echo of the input. */
export interface ProvisioningErrorBody {
  error: ProvisioningErrorCode;
  message: string;
}

/**
 * An error with a definite answer. Throw it from a hook (`transform`, `authorize`, `onChange`) or
 * from a store to choose the status: its `code` sets the status and its message is sent as is,
 * so the message must never contain a password or other input. Any other error thrown by a store
 * answers 503 `store_unavailable`; by a hook, 500 `internal_error`.
 *
 * @example
 * ```ts
 * transform: (patch) => {
 *   if (patch.passwordFormat === "md5") {
 *     throw new ProvisioningError("invalid_user", "MD5 passwords are not accepted; send clear text or bcrypt");
 *   }
 *   return patch;
 * }
 * ```
 */
export class ProvisioningError extends Error {
  override readonly name = "ProvisioningError";
  /** What went wrong, from the closed list of codes. */
  readonly code: ProvisioningErrorCode;
  /** The HTTP status this error answers with, derived from the code. */
  readonly status: ProvisioningErrorStatus;

  constructor(code: ProvisioningErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.status = statusByCode[code];
  }
}

const jsonHeaders = { "content-type": "application/json; charset=utf-8" } as const;

/** Builds the JSON error answer for a code; `headers` adds to the content type. */
export function errorResponse(
  code: ProvisioningErrorCode,
  message: string,
  headers?: Readonly<Record<string, string>>,
): ProvisioningResponse {
  const body: ProvisioningErrorBody = { error: code, message };
  return {
    status: statusByCode[code],
    headers: headers ? { ...jsonHeaders, ...headers } : jsonHeaders,
    body: JSON.stringify(body),
  };
}
