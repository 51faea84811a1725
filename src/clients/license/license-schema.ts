import * as z from "zod/mini";
import { type RecordOf, timestampCodec, wireRecord } from "../integration-api/wire-record.ts";

// The License API's records, defined once: the client decodes with them (license-records.ts),
// the fake License API encodes with them (src/testing/fake-license-api.ts). Wire names are the
// snake_case of the names below. The License API is written in Go: an unset optional field may
// come as `null`, read as absent. The messages are the ends of a ResponseShapeError's.

const text = z.string({ error: "must be a string" });
const date = timestampCodec();
/** A string, or nothing: a value of another type is read as absent. */
const lenientText = z.codec(z.unknown(), z.optional(z.string()), {
  decode: (value) => (typeof value === "string" ? value : undefined),
  encode: (value) => value,
});

/**
 * A license field's value. The platform sends an Integer field as a JSON number in the license
 * but as a string from the field endpoint; use `LicenseField.type` to read it.
 */
export const licenseValueSchema = z.nullable(z.union([z.string(), z.number(), z.boolean()]));

/** One custom field of the license (`fields[]`). */
export const licenseFieldRecord = /* @__PURE__ */ wireRecord(
  {
    /** The field's name, as the field endpoint takes it (`max_users`). */
    field: text,
    /** Read as the field's name when absent or not a string. */
    title: lenientText,
    /** The declared type: "Integer", "String", "Boolean"...; read as "" when absent or not a string. */
    type: lenientText,
    value: licenseValueSchema,
    /** Whether the console hides the field from the customer. */
    hideFromCustomer: z._default(z.boolean(), false),
  },
  { nullAsAbsent: true },
);

type LicenseFieldRecord = RecordOf<typeof licenseFieldRecord.shape>;

/** A license field as read: `title` and `type` always there. */
export type LicenseFieldRead = Omit<LicenseFieldRecord, "title" | "type"> & {
  /** The field's title; its name when the platform sent none. */
  title: string;
  /** The declared type: "Integer", "String", "Boolean" and others the platform may add. */
  type: string;
};

/** {@link licenseFieldRecord} with its defaults: a title read as the name, a type as "". */
const licenseField = /* @__PURE__ */ z.codec(
  licenseFieldRecord.codec,
  z.custom<LicenseFieldRead>(),
  {
    decode: (field) => ({ ...field, title: field.title ?? field.field, type: field.type ?? "" }),
    encode: (field) => field,
  },
);

/** The customer's license (GET /license/v1/license), in the order its problems are reported. */
export const licenseRecord = /* @__PURE__ */ wireRecord(
  {
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
  },
  { nullAsAbsent: true },
);

/** One field by name (GET /license/v1/field/:name): `{"field":"max_queues","value":"99"}`. */
export const licenseFieldValueRecord = /* @__PURE__ */ wireRecord(
  {
    field: z.string(),
    /** As the platform sent it: an Integer field's value arrives as a string ("99"). */
    value: licenseValueSchema,
  },
  { nullAsAbsent: true },
);
