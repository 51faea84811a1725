// wireRecord(): a record's one zod schema, and from it its wire names, decoding and encoding.
import type { JsonObject, JsonValue } from "type-fest";
import * as z from "zod/mini";
import { snakeCase } from "../../internal/wire-names.ts";
import { isJsonObject } from "./json-body.ts";
import { Timestamp } from "./timestamp.ts";

// One definition per Integration API record: a zod shape under the SDK's camelCase names, whose
// field schemas decode each wire value (a timestamp codec turns text into a Timestamp). The wire
// names are derived from the TypeScript names by one rule, so the client that reads a record and
// the fake that serves it cannot disagree on them. The readers keep their own policies (what is
// required, which items are set aside, the messages of a ResponseShapeError); this module gives
// them each field's outcome.

/** A record's fields: TypeScript name to the zod schema that decodes its wire value. */
export type RecordShape = Readonly<Record<string, z.ZodMiniType>>;

/** A record in the SDK's form: camelCase names, decoded values (a `Timestamp`). */
export type RecordOf<Shape extends RecordShape> = z.output<z.ZodMiniObject<Shape>>;

/** A record with the SDK's names and the wire's values (a date as text): what a fake holds. */
export type WireValuesOf<Shape extends RecordShape> = z.input<z.ZodMiniObject<Shape>>;

/** How a record's wire names are made and matched. */
export interface WireRecordOptions<Shape extends RecordShape> {
  /** The rule from a TypeScript name to its wire name: snake_case unless given. */
  rule?: (name: string) => string;
  /**
   * Go's encoding/json writes an unset optional field as `null`: read it as absent where the
   * field is optional (a required field sent as `null` is malformed).
   */
  nullAsAbsent?: boolean;
  /**
   * Go's encoding/json matches keys case-insensitively: a key matches that way when it does not
   * match exactly (a server may send `dn` for `DN`). Only own keys count.
   */
  caseInsensitive?: boolean;
  /** Wire names that the rule does not give, e.g. `{ dn: "DN" }`. */
  names?: { readonly [Name in keyof Shape]?: string };
}

/** A field whose wire value its schema refused. */
export interface FieldProblem {
  /** The TypeScript name. */
  name: string;
  /** The wire name. */
  wireName: string;
  /** The field was not sent (or sent as `null` to a Go reader) and its schema requires it. */
  absent: boolean;
  /** zod's issues, with paths inside the field's value. */
  issues: readonly z.core.$ZodIssue[];
}

/** What {@link WireRecord.read} makes of a wire object. */
export interface FieldsRead<Shape extends RecordShape> {
  /** The fields that decoded, under their TypeScript names; absent optional ones left out. */
  value: Partial<RecordOf<Shape>>;
  /** The fields that did not decode, in the shape's order. */
  problems: FieldProblem[];
  /**
   * Entries whose key is no wire name exactly, and entries that did not decode, in the wire's
   * order, as sent.
   */
  extra: [string, JsonValue][];
}

/** A record's one definition, with what the client and the fake derive from it. */
export interface WireRecord<Shape extends RecordShape> {
  /** The fields, under their TypeScript names. */
  readonly shape: Shape;
  /** Each field's wire name. */
  readonly wireNames: { readonly [Name in keyof Shape]: string };
  /**
   * Decodes a wire object field by field, never throwing: the reader decides what a problem
   * means. Objects are built from entries, so a `__proto__` key stays plain data.
   */
  read(wire: JsonObject): FieldsRead<Shape>;
  /** The wire form of a record in the SDK's form: each value encoded by its field's schema. */
  encode(record: RecordOf<Shape>): JsonObject;
  /** The wire form of a record whose values are wire values already (a fake's): names only. */
  toWire(record: WireValuesOf<Shape>): JsonObject;
  /**
   * The record as a zod codec (wire object ↔ SDK form), to nest in another record's shape
   * (`z.array(field.codec)`): any problem fails it, with the issue's path under the wire name.
   */
  readonly codec: z.ZodMiniCodec<
    z.ZodMiniType<JsonObject, unknown>,
    z.ZodMiniType<RecordOf<Shape>, RecordOf<Shape>>
  >;
}

const notObject = "is not an object";

/** Defines a record: its shape, and the wire names derived from it. Build it once, at load. */
export function wireRecord<const Shape extends RecordShape>(
  shape: Shape,
  options: WireRecordOptions<Shape> = {},
): WireRecord<Shape> {
  const rule = options.rule ?? snakeCase;
  const names = options.names ?? {};
  const fields = Object.entries(shape).map(([name, schema]) => ({
    name,
    wireName: (names as Record<string, string | undefined>)[name] ?? rule(name),
    schema,
  }));
  const wireNames = new Set(fields.map((field) => field.wireName));
  const nullAsAbsent = options.nullAsAbsent === true;
  const caseInsensitive = options.caseInsensitive === true;

  const lookUp = (wire: JsonObject, wireName: string): JsonValue | undefined => {
    if (Object.hasOwn(wire, wireName)) return wire[wireName];
    if (!caseInsensitive) return undefined;
    const lower = wireName.toLowerCase();
    const key = Object.keys(wire).find((candidate) => candidate.toLowerCase() === lower);
    return key === undefined ? undefined : wire[key];
  };

  const decodeFields = (wire: JsonObject) => {
    // Keys are the shape's own names, never the wire's: no `__proto__` can reach a prototype.
    const value: Record<string, unknown> = {};
    const problems: FieldProblem[] = [];
    for (const { name, wireName, schema } of fields) {
      const { optin } = schema._zod;
      let sent = lookUp(wire, wireName);
      if (sent === null && nullAsAbsent && optin !== undefined) sent = undefined;
      // Absent and optional: left out, without decoding (an exact optional would refuse
      // `undefined`, and a refusal costs a ZodError). A defaulted field decodes to its default.
      if (sent === undefined && optin === "optional") continue;
      const decoded = z.safeDecode(schema, sent as never);
      if (!decoded.success) {
        problems.push({ name, wireName, absent: sent === undefined, issues: decoded.error.issues });
      } else if (decoded.data !== undefined) value[name] = decoded.data;
    }
    return { value: value as Partial<RecordOf<Shape>>, problems };
  };

  const read = (wire: JsonObject): FieldsRead<Shape> => {
    const { value, problems } = decodeFields(wire);
    const refused = problems.map((problem) => problem.wireName);
    const extra = Object.entries(wire).filter(
      ([key]) => !wireNames.has(key) || refused.includes(key),
    ) as [string, JsonValue][];
    return { value, problems, extra };
  };

  const encode = (record: RecordOf<Shape>): JsonObject => {
    const wire: [string, unknown][] = [];
    for (const { name, wireName, schema } of fields) {
      const value = (record as Record<string, unknown>)[name];
      if (value !== undefined) wire.push([wireName, z.encode(schema, value as never)]);
    }
    return Object.fromEntries(wire) as JsonObject;
  };

  const toWire = (record: WireValuesOf<Shape>): JsonObject => {
    const wire: [string, unknown][] = [];
    for (const { name, wireName } of fields) {
      const value = (record as Record<string, unknown>)[name];
      if (value !== undefined) wire.push([wireName, value]);
    }
    return Object.fromEntries(wire) as JsonObject;
  };

  const codec = z.codec(
    z.custom<JsonObject>((value) => isJsonObject(value as JsonValue), { error: notObject }),
    z.custom<RecordOf<Shape>>(),
    {
      decode: (wire, context) => {
        const { value, problems } = decodeFields(wire);
        if (problems.length === 0) return value as RecordOf<Shape>;
        for (const problem of problems) {
          for (const issue of problem.issues) {
            context.issues.push({
              ...issue,
              code: "custom",
              input: undefined,
              path: [problem.wireName, ...issue.path],
            });
          }
        }
        return z.NEVER;
      },
      encode,
    },
  );

  return {
    shape,
    wireNames: Object.fromEntries(
      fields.map(({ name, wireName }) => [name, wireName]),
    ) as WireRecord<Shape>["wireNames"],
    read,
    encode,
    toWire,
    codec,
  };
}

/**
 * An RFC 3339 date-time: text on the wire, a lossless {@link Timestamp} in the SDK. `message` is
 * the issue's, for text that is no date-time and for a value that is no text.
 */
export function timestampCodec(message = "must be an RFC 3339 date-time") {
  return z.codec(z.string({ error: message }), z.custom<Timestamp>(), {
    decode: (text, context) => {
      try {
        return Timestamp.parse(text);
      } catch {
        context.issues.push({ code: "custom", message, input: text });
        return z.NEVER;
      }
    },
    encode: (value) => value.text,
  });
}
