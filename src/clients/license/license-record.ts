import type { JsonObject } from "type-fest";
import * as z from "zod/mini";
import { timestampCodec, wireRecord } from "../integration-api/wire-record.ts";

// The License API's records, defined once: the client decodes with them (read-license.ts),
// the fake License API encodes with them (src/clients/license/fake.ts). Wire names are the
// snake_case of the names below. The License API is written in Go: an unset optional field may
// come as `null`, read as absent. The messages are the ends of a ResponseShapeError's.
//
// The public records (License, LicenseField, LicenseFieldValue) are declared here, as the zod
// output of their shapes, and re-exported by read-license.ts: the build shares this module's
// declarations with ./testing, and an entry's declarations may take from a shared chunk only
// what the entry exports itself (else a consumer meets TS2742), never a shape or a helper.

const text = z.string({ error: "must be a string" });
const date = timestampCodec();
/** A string, or nothing: a value of another type is read as absent. */
const lenientText = z.codec(z.unknown(), z.optional(z.string()), {
  decode: (value) => (typeof value === "string" ? value : undefined),
  encode: (value) => value,
});

/**
 * A license field's value, on every API: text, a number or a boolean. The Integration API
 * sends an Integer field as a JSON number in the license but as a string from the field
 * endpoint (use `LicenseField.type` to read it), and `null` for a field without a value, which
 * the newer API leaves out: each record says which it takes.
 */
export const licenseValueSchema = z.union([z.string(), z.number(), z.boolean()]);

/**
 * A license field's value. The platform sends an Integer field as a JSON number in the license
 * but as a string from the field endpoint; use {@link LicenseField.type} to read it.
 */
export type LicenseValue = string | number | boolean | null;

/** A license field's signatures, base64: v1 (RSA-PSS with MD5), v2 (RSA-PSS with SHA-256). */
export interface LicenseSignature {
  v1?: string;
  v2?: string;
}

const licenseFieldShape = {
  /** The field's name, as the field endpoint takes it (`max_users`). */
  field: text,
  /** Read as the field's name when absent or not a string. */
  title: lenientText,
  /** The declared type: "Integer", "String", "Boolean"...; read as "" when absent or not a string. */
  type: lenientText,
  value: z.nullable(licenseValueSchema),
  /** Whether the console hides the field from the customer. */
  hideFromCustomer: z._default(z.boolean(), false),
};

/** One custom field of the license (`fields[]`). */
export const licenseFieldRecord = /* @__PURE__ */ wireRecord(licenseFieldShape, {
  nullAsAbsent: true,
});

/** One custom field of the license (`fields[]`): `licenseFieldRecord`, `title` and `type` always there. */
export interface LicenseField
  extends Omit<z.output<z.ZodMiniObject<typeof licenseFieldShape>>, "title" | "type"> {
  /** The field's title; its name when the platform sent none. */
  title: string;
  /** The declared type: "Integer", "String", "Boolean" and others the platform may add. */
  type: string;
  /** The field's description (newer API only). */
  description?: string;
  /**
   * The field's signatures (newer API only): check them with `verifyLicenseField(field, key)`
   * before trusting the value.
   */
  signature?: LicenseSignature;
}

/** {@link licenseFieldRecord} with its defaults: a title read as the name, a type as "". */
const licenseField = /* @__PURE__ */ z.codec(licenseFieldRecord.codec, z.custom<LicenseField>(), {
  decode: (field): LicenseField => ({
    ...field,
    title: field.title ?? field.field,
    type: field.type ?? "",
  }),
  encode: (field) => field,
});

const licenseShape = {
  licenseId: z.string(),
  installationId: z.string(),
  fields: z.array(licenseField, { error: "is not an array" }),
  /** To whom the license is assigned (platforms from 2018-06). */
  assignee: z.exactOptional(text),
  /** The release channel (API 1.3.5 and later). */
  releaseChannel: z.exactOptional(text),
  billingFrequency: z.exactOptional(text),
  /** Absent when the license never expires. */
  expirationTime: z.exactOptional(date),
  billingBegin: z.exactOptional(date),
  /** Absent when billing never ends. */
  billingEnd: z.exactOptional(date),
};

/** The customer's license (GET /license/v1/license), in the order its problems are reported. */
export const licenseRecord = /* @__PURE__ */ wireRecord(licenseShape, { nullAsAbsent: true });

/** The customer's license (GET /license/v1/license): `licenseRecord`. */
export interface License extends z.output<z.ZodMiniObject<typeof licenseShape>> {
  fields: LicenseField[];
  /** The body as received, fields the SDK does not know included. */
  raw: JsonObject;
}

const licenseFieldValueShape = {
  field: z.string(),
  /** As the platform sent it: an Integer field's value arrives as a string ("99"). */
  value: z.nullable(licenseValueSchema),
};

/** One field by name (GET /license/v1/field/:name): `{"field":"max_queues","value":"99"}`. */
export const licenseFieldValueRecord = /* @__PURE__ */ wireRecord(licenseFieldValueShape, {
  nullAsAbsent: true,
});

/** One field by name (GET /license/v1/field/:name): `licenseFieldValueRecord`. */
export interface LicenseFieldValue
  extends z.output<z.ZodMiniObject<typeof licenseFieldValueShape>> {
  /** The body as received. */
  raw: JsonObject;
}
