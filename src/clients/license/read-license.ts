import type { JsonObject } from "type-fest";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { readJsonObject } from "../integration-api/json-body.ts";
import type { Timestamp } from "../integration-api/timestamp.ts";
import type { FieldProblem } from "../integration-api/wire-record.ts";
import {
  type License,
  type LicenseField,
  type LicenseFieldValue,
  type LicenseSignature,
  licenseFieldRecord,
  licenseFieldValueRecord,
  licenseRecord,
} from "./license-record.ts";
import type { SdkLicenseFlags } from "./sdk-license-schemas.ts";

// The records of the License API itself are declared with their schemas (license-record.ts).
export type {
  License,
  LicenseField,
  LicenseFieldValue,
  LicenseSignature,
  LicenseValue,
} from "./license-record.ts";

/**
 * The license as the newer in-cluster API serves it (GET /api/v1/license/info, with its fields):
 * the same names where the meaning is the same. It has no installation id (the app info's
 * `instanceID` is another id) and no billing dates; its fields carry signatures and typed values
 * (an Integer is a number). `expires_at` stays among the fields (it is signed) and is also read
 * into `expirationTime`. The seven feature flags (`isAirgapSupported`, `isGitOpsSupported`,
 * `isIdentityServiceSupported`, `isGeoaxisSupported`, `isSnapshotSupported`,
 * `isSupportBundleUploadSupported`, `isSemverRequired`) are typed from the service's record
 * (`SdkLicenseFlags`); one an older service leaves out reads as `false`.
 */
export interface SdkLicense extends SdkLicenseFlags {
  licenseId: string;
  /** `customerName`. */
  assignee: string;
  /** `channelName`. */
  releaseChannel: string;
  /** `channelID`: the license's channel. */
  channelId: string;
  /** The vendor's address the service reports to, e.g. `https://replicated.app` ("" if unknown). */
  endpoint: string;
  /** "dev", "prod", "trial"... */
  licenseType: string;
  customerId: string;
  customerEmail: string;
  appSlug: string;
  licenseSequence: number;
  fields: LicenseField[];
  /**
   * From the field `expires_at` as served, unverified: absent when it is `""` (the vendor's
   * "never expires") and equally when the field is missing, which a tampered service can
   * arrange. Where expiry matters, read `expires_at` by name with `field()`, require a string
   * (a signed `""` is "never", an absent field is not) and check it with `verifyLicenseField`
   * (README: "What a signature proves").
   */
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

/**
 * Reads the license. Every documented field must have its documented type: a license gates what
 * the customer paid for, so a malformed `expiration_time` fails loudly rather than reading as
 * "never expires". Absent optional fields (and Go's `null`) are left out.
 */
export function readLicense(response: ApiResponse): License {
  const raw = readJsonObject(response);
  const { value, problems } = licenseRecord.read(raw);
  const [problem] = problems;
  if (problem !== undefined) throw new ResponseShapeError(response, licenseProblem(problem, raw));
  return { ...(value as Omit<License, "raw">), raw };
}

/** The message of the first problem, as this reader has always worded it. */
function licenseProblem(problem: FieldProblem, raw: JsonObject): string {
  const names = licenseRecord.wireNames;
  if (problem.name === "licenseId" || problem.name === "installationId") {
    return `${names.licenseId} and ${names.installationId} must be strings`;
  }
  const [issue] = problem.issues;
  const [index, key] = issue?.path ?? [];
  if (problem.name !== "fields" || typeof index !== "number") {
    return `${problem.wireName} ${issue?.message}`;
  }
  const item = `${problem.wireName}[${index}]`;
  const fieldName = licenseFieldRecord.wireNames.field;
  if (key === undefined) return `${item} ${issue?.message}`;
  if (key === fieldName) return `${item}.${fieldName} ${issue?.message}`;
  const wire = (raw[problem.wireName] as JsonObject[])[index] as JsonObject;
  return `${item} (${String(wire[fieldName])}) has a malformed ${licenseFieldRecord.wireNames.value} or ${licenseFieldRecord.wireNames.hideFromCustomer}`;
}

/** Reads one field: `{"field":"max_queues","value":"99"}`. */
export function readFieldValue(response: ApiResponse): LicenseFieldValue {
  const raw = readJsonObject(response);
  const { value, problems } = licenseFieldValueRecord.read(raw);
  if (problems.length > 0) {
    const { field, value: named } = licenseFieldValueRecord.wireNames;
    throw new ResponseShapeError(response, `expected { ${field}, ${named} }`);
  }
  return { ...(value as Omit<LicenseFieldValue, "raw">), raw };
}
