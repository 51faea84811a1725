// The SCIM error form (RFC 7644 §3.12): every non-2xx answer of the SCIM server is built here, so
// that its shape (`status` as a string, `scimType` only where the RFC names one) has one home.
import type { ProvisioningResponse } from "../provisioning/types.ts";

/** The SCIM error message schema. */
export const errorSchema = "urn:ietf:params:scim:api:messages:2.0:Error";

/** The `scimType` values of RFC 7644 §3.12 (all 400 but `uniqueness`, 409, and `sensitive`, 403). */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

/** The statuses the SCIM server answers errors with. */
export type ScimErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 412 | 413 | 415 | 500 | 501 | 503;

/**
 * An error with a definite SCIM answer: thrown inside the server (a bad filter, a bad PATCH path),
 * or from an `authenticate` function or a store to choose the answer. Its `detail` is sent as is:
 * it must never contain a secret. Any other error a store throws answers 503.
 */
export class ScimError extends Error {
  override readonly name = "ScimError";
  readonly status: ScimErrorStatus;
  readonly scimType: ScimType | undefined;

  constructor(status: ScimErrorStatus, detail: string, scimType?: ScimType) {
    super(detail);
    this.status = status;
    this.scimType = scimType;
  }

  /** The error's SCIM JSON body. */
  toJSON(): { schemas: [string]; status: string; scimType?: ScimType; detail: string } {
    return {
      schemas: [errorSchema],
      status: String(this.status),
      ...(this.scimType === undefined ? {} : { scimType: this.scimType }),
      detail: this.message,
    };
  }
}

/** The media type of every SCIM answer with a body (RFC 7644 §8.1; Entra wants it everywhere). */
export const scimMediaType = "application/scim+json; charset=utf-8";

/** A SCIM error as the plain-data answer of the core. */
export function scimErrorResponse(
  error: ScimError,
  headers: Readonly<Record<string, string>> = {},
): ProvisioningResponse {
  return {
    status: error.status,
    headers: { "content-type": scimMediaType, ...headers },
    body: JSON.stringify(error),
  };
}

/** Shorthands for the 400s of the RFC, so that call sites read as the RFC does. */
export const badFilter = (detail: string) => new ScimError(400, detail, "invalidFilter");
export const badPath = (detail: string) => new ScimError(400, detail, "invalidPath");
export const badValue = (detail: string) => new ScimError(400, detail, "invalidValue");
export const badSyntax = (detail: string) => new ScimError(400, detail, "invalidSyntax");
export const noTarget = (detail: string) => new ScimError(400, detail, "noTarget");
export const mutability = (detail: string) => new ScimError(400, detail, "mutability");
