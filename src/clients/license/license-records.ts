import type { JsonObject, JsonValue } from "type-fest";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { isJsonObject, readJsonObject } from "../integration-api/json-body.ts";
import { Timestamp } from "../integration-api/timestamp.ts";

/**
 * A license field's value. The platform sends an Integer field as a JSON number in the license
 * but as a string from the field endpoint; use {@link LicenseField.type} to read it.
 */
export type LicenseValue = string | number | boolean | null;

/** One custom field of the license (`fields[]`). */
export interface LicenseField {
  /** The field's name, as the field endpoint takes it (`max_users`). */
  field: string;
  title: string;
  /** The declared type: "Integer", "String", "Boolean" and others the platform may add. */
  type: string;
  value: LicenseValue;
  /** Whether the console hides the field from the customer. */
  hideFromCustomer: boolean;
  /** The field's description (newer API only). */
  description?: string;
  /**
   * The field's signatures (newer API only): check them with `verifyLicenseField(field, key)`
   * before trusting the value.
   */
  signature?: LicenseSignature;
}

/** A license field's signatures, base64: v1 (RSA-PSS with MD5), v2 (RSA-PSS with SHA-256). */
export interface LicenseSignature {
  v1?: string;
  v2?: string;
}

/**
 * The license as the newer in-cluster API serves it (GET /api/v1/license/info, with its fields):
 * the same names where the meaning is the same. It has no installation id (the app info's
 * `instanceID` is another id) and no billing dates; its fields carry signatures and typed values
 * (an Integer is a number). `expires_at` stays among the fields (it is signed) and is also read
 * into `expirationTime`.
 */
export interface SdkLicense {
  licenseId: string;
  /** `customerName`. */
  assignee: string;
  /** `channelName`. */
  releaseChannel: string;
  /** "dev", "prod", "trial"... */
  licenseType: string;
  customerId: string;
  customerEmail: string;
  appSlug: string;
  licenseSequence: number;
  fields: LicenseField[];
  /** From the field `expires_at`; absent when the license never expires. */
  expirationTime?: Timestamp;
  /** The service could not refresh the license from the vendor and served its last copy. */
  fromCache: boolean;
  /** The license info's body as received. */
  raw: JsonObject;
}

/**
 * The license as the admin console's compatibility endpoint serves it: the legacy shape
 * without billing dates, with `licenseType`; its fields are unsigned.
 */
export interface KotsLicense {
  licenseId: string;
  /** The admin console's app id. */
  installationId: string;
  assignee?: string;
  releaseChannel?: string;
  licenseType?: string;
  fields: LicenseField[];
  expirationTime?: Timestamp;
  /** The body as received. */
  raw: JsonObject;
}

/**
 * One field from the newer API (GET /api/v1/license/fields/{name}): a typed value (an Integer
 * is a number) and its signatures. `value` is null when the field has none (it signs as `<nil>`).
 */
export interface SdkLicenseFieldValue extends LicenseFieldValue {
  title?: string;
  type?: string;
  description?: string;
  hideFromCustomer?: boolean;
  signature: LicenseSignature;
  /** The service could not refresh from the vendor and served its last copy. */
  fromCache: boolean;
}

/** The customer's license (GET /license/v1/license). */
export interface License {
  licenseId: string;
  installationId: string;
  /** To whom the license is assigned (platforms from 2018-06). */
  assignee?: string;
  /** The release channel (API 1.3.5 and later). */
  releaseChannel?: string;
  fields: LicenseField[];
  /** Absent when the license never expires. */
  expirationTime?: Timestamp;
  billingFrequency?: string;
  billingBegin?: Timestamp;
  /** Absent when billing never ends. */
  billingEnd?: Timestamp;
  /** The body as received, fields the SDK does not know included. */
  raw: JsonObject;
}

/** One field by name (GET /license/v1/field/:name). */
export interface LicenseFieldValue {
  field: string;
  /** As the platform sent it: an Integer field's value arrives as a string ("99"). */
  value: LicenseValue;
  /** The body as received. */
  raw: JsonObject;
}

const optionalStrings = [
  ["assignee", "assignee"],
  ["releaseChannel", "release_channel"],
  ["billingFrequency", "billing_frequency"],
] as const;

const optionalTimestamps = [
  ["expirationTime", "expiration_time"],
  ["billingBegin", "billing_begin"],
  ["billingEnd", "billing_end"],
] as const;

/**
 * Reads the license. Every documented field must have its documented type: a license gates what
 * the customer paid for, so a malformed `expiration_time` fails loudly rather than reading as
 * "never expires". Absent optional fields (and Go's `null`) are left out.
 */
export function readLicense(response: ApiResponse): License {
  const raw = readJsonObject(response);
  const shape = (problem: string) => new ResponseShapeError(response, problem);
  const licenseId = raw.license_id;
  const installationId = raw.installation_id;
  if (typeof licenseId !== "string" || typeof installationId !== "string") {
    throw shape("license_id and installation_id must be strings");
  }
  const fields = raw.fields;
  if (!Array.isArray(fields)) throw shape("fields is not an array");
  const license: License = {
    licenseId,
    installationId,
    fields: fields.map((item, index) => readField(item, index, shape)),
    raw,
  };
  for (const [name, wireName] of optionalStrings) {
    const value = present(raw, wireName);
    if (value === undefined) continue;
    if (typeof value !== "string") throw shape(`${wireName} must be a string`);
    license[name] = value;
  }
  for (const [name, wireName] of optionalTimestamps) {
    const value = present(raw, wireName);
    if (value === undefined) continue;
    const timestamp = typeof value === "string" ? parseTimestamp(value) : undefined;
    if (timestamp === undefined) throw shape(`${wireName} must be an RFC 3339 date-time`);
    license[name] = timestamp;
  }
  return license;
}

function readField(
  wire: JsonValue,
  index: number,
  shape: (problem: string) => ResponseShapeError,
): LicenseField {
  if (!isJsonObject(wire)) throw shape(`fields[${index}] is not an object`);
  const { field, title, type, value } = wire;
  const hidden = wire.hide_from_customer ?? false;
  if (typeof field !== "string") throw shape(`fields[${index}].field must be a string`);
  if (!isValue(value) || typeof hidden !== "boolean") {
    throw shape(`fields[${index}] (${field}) has a malformed value or hide_from_customer`);
  }
  return {
    field,
    title: typeof title === "string" ? title : field,
    type: typeof type === "string" ? type : "",
    value,
    hideFromCustomer: hidden,
  };
}

/** Reads one field: `{"field":"max_queues","value":"99"}`. */
export function readFieldValue(response: ApiResponse): LicenseFieldValue {
  const raw = readJsonObject(response);
  const { field, value } = raw;
  if (typeof field !== "string" || !isValue(value)) {
    throw new ResponseShapeError(response, "expected { field, value }");
  }
  return { field, value, raw };
}

function isValue(value: JsonValue | undefined): value is LicenseValue {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

/** An own, non-null value: the platform leaves unset optional fields out; Go may send null. */
function present(wire: JsonObject, name: string): JsonValue | undefined {
  return Object.hasOwn(wire, name) ? (wire[name] ?? undefined) : undefined;
}

function parseTimestamp(text: string): Timestamp | undefined {
  try {
    return Timestamp.parse(text);
  } catch {
    return undefined;
  }
}
