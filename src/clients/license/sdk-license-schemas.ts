import * as z from "zod/mini";
import { Timestamp } from "../integration-api/timestamp.ts";
import { licenseValueSchema } from "./license-record.ts";

// The license's records on the newer in-cluster API (GET /api/v1/license/info, /fields,
// /fields/{name}) and on the admin console's compatibility endpoint, one zod schema each: the
// record's type, its decoding (sdk-api-license.ts) and its encoding in the fake
// (fake-sdk-api.ts). The wire names are the service's own (camelCase; the admin console's
// snake_case); the readers map them to the SDK's names. A field's value has one schema for
// every API, `licenseValueSchema` (license-record.ts).

const text = z._default(z.string(), "");

/** An RFC 3339 timestamp, lossless; the service sends `""` for one it does not know. */
const timestamp = z.codec(
  z.string(),
  z.optional(z.custom<Timestamp>((value) => value instanceof Timestamp)),
  {
    decode: (text, context) => {
      if (text === "") return undefined;
      try {
        return Timestamp.parse(text);
      } catch {
        context.issues.push({ code: "custom", message: "not an RFC 3339 date-time", input: text });
        return z.NEVER;
      }
    },
    encode: (value) => value?.text ?? "",
  },
);

/** A field's signatures, base64: v1 (RSA-PSS, MD5), v2 (RSA-PSS, SHA-256). */
export const licenseSignatureSchema = z.object({
  v1: z.exactOptional(z.string()),
  v2: z.exactOptional(z.string()),
});

/** GET /api/v1/license/fields/{name}, and each entry of /license/fields. */
export const sdkLicenseFieldSchema = z.object({
  name: z.optional(z.string()),
  title: z.optional(z.string()),
  description: z.optional(z.string()),
  value: z.optional(licenseValueSchema),
  valueType: z.optional(z.string()),
  isHidden: z.optional(z.boolean()),
  signature: z._default(licenseSignatureSchema, {}),
});
export type SdkLicenseField = z.output<typeof sdkLicenseFieldSchema>;

/** GET /api/v1/license/fields: the fields by name (a `__proto__` key is dropped). */
export const sdkLicenseFieldsSchema = z.record(z.string(), sdkLicenseFieldSchema);

/**
 * The license's feature flags (GET /api/v1/license/info): the service writes all seven, `false`
 * included; an older one may leave one out, which reads as `false`.
 */
const licenseFlagsShape = {
  isAirgapSupported: z._default(z.boolean(), false),
  isGitOpsSupported: z._default(z.boolean(), false),
  isIdentityServiceSupported: z._default(z.boolean(), false),
  isGeoaxisSupported: z._default(z.boolean(), false),
  isSnapshotSupported: z._default(z.boolean(), false),
  isSupportBundleUploadSupported: z._default(z.boolean(), false),
  isSemverRequired: z._default(z.boolean(), false),
};

/** The flags' names, in the service's order (a literal: bundles that do not use it drop it). */
export const sdkLicenseFlagNames = [
  "isAirgapSupported",
  "isGitOpsSupported",
  "isIdentityServiceSupported",
  "isGeoaxisSupported",
  "isSnapshotSupported",
  "isSupportBundleUploadSupported",
  "isSemverRequired",
] as const satisfies readonly (keyof typeof licenseFlagsShape)[];

/** GET /api/v1/license/info. */
export const sdkLicenseInfoSchema = z.object({
  licenseID: z.string(),
  appSlug: text,
  channelID: text,
  channelName: text,
  customerID: text,
  customerName: text,
  customerEmail: text,
  licenseType: text,
  /** The vendor's address the service talks to, e.g. `https://replicated.app`. */
  endpoint: text,
  licenseSequence: z._default(z.int(), 0),
  ...licenseFlagsShape,
  entitlements: z.optional(sdkLicenseFieldsSchema),
});
export type SdkLicenseInfo = z.output<typeof sdkLicenseInfoSchema>;

/**
 * The license's seven feature flags, as typed on the client's license record; spelled out for its
 * readers (a type test holds it to the schema's).
 */
export interface SdkLicenseFlags {
  isAirgapSupported: boolean;
  isGitOpsSupported: boolean;
  isIdentityServiceSupported: boolean;
  isGeoaxisSupported: boolean;
  isSnapshotSupported: boolean;
  isSupportBundleUploadSupported: boolean;
  isSemverRequired: boolean;
}

/** A field of the admin console's compatibility license (`fields[]`). */
export const kotsLicenseFieldSchema = z.object({
  field: z.string(),
  title: z.optional(z.string()),
  type: z.optional(z.string()),
  value: z._default(z.nullable(licenseValueSchema), null),
  hide_from_customer: z.optional(z.boolean()),
});

/** GET http://kotsadm:3000/license/v1/license: the admin console's compatibility license. */
export const kotsLicenseSchema = z.object({
  license_id: z.string(),
  installation_id: z.string(),
  assignee: z.optional(z.string()),
  release_channel: z.optional(z.string()),
  license_type: z.optional(z.string()),
  expiration_time: z.optional(timestamp),
  fields: z.array(kotsLicenseFieldSchema),
});
