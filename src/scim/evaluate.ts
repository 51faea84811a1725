// The evaluation of a parsed SCIM filter (RFC 7644 §3.4.2.2) against a resource: attribute lookup
// in any case (RFC 7643 §2.1), the scope of a schema URN, and the comparison operators with each
// attribute's caseExact. Also the JSON helpers (`ownKey`, `ownValue`, `booleanOf`) the resource,
// mapping and PATCH modules share. The grammar itself lives in filter.ts.
import { asciiLowerCase } from "../users/store-rules.ts";
import type { AttributePath, CompareOperator, CompareValue, Filter } from "./filter.ts";
import {
  type AttributeDefinition,
  attributeOf,
  attributesOfSchema,
  userAttributes,
  userSchema,
} from "./schemas.ts";

/** A resource as JSON: the User with its extension under the extension's URN. */
export type JsonObject = { [key: string]: unknown };

/** The own property of `object` named `name` in any case (RFC 7643 §2.1), or undefined. */
export function ownKey(object: JsonObject, name: string): string | undefined {
  if (Object.hasOwn(object, name)) return name;
  const lower = name.toLowerCase();
  for (const key of Object.keys(object)) if (key.toLowerCase() === lower) return key;
  return undefined;
}

/** The value at `name` of `object`, in any case. */
export function ownValue(object: unknown, name: string): unknown {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return undefined;
  const key = ownKey(object as JsonObject, name);
  return key === undefined ? undefined : (object as JsonObject)[key];
}

/** The definitions a path's schema holds, and the object of the resource holding its attributes. */
export function scopeOf(
  resource: JsonObject,
  schema: string | undefined,
): { container: unknown; attributes: readonly AttributeDefinition[] | undefined } {
  if (schema === undefined || schema === userSchema) {
    return { container: resource, attributes: userAttributes };
  }
  return { container: ownValue(resource, schema), attributes: attributesOfSchema(schema) };
}

/** Whether `resource` matches `filter`. `definitions` is the scope of a value filter's values. */
export function matches(
  filter: Filter,
  resource: JsonObject,
  definitions?: readonly AttributeDefinition[],
): boolean {
  switch (filter.op) {
    case "and":
      return (
        matches(filter.left, resource, definitions) && matches(filter.right, resource, definitions)
      );
    case "or":
      return (
        matches(filter.left, resource, definitions) || matches(filter.right, resource, definitions)
      );
    case "not":
      return !matches(filter.filter, resource, definitions);
    case "[]": {
      const { value, definition } = lookUp(filter.path, resource, definitions);
      const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
      return values.some(
        (item) =>
          typeof item === "object" &&
          item !== null &&
          matches(filter.filter, item as JsonObject, definition?.subAttributes ?? []),
      );
    }
    default: {
      const { value, definition } = lookUp(filter.path, resource, definitions);
      const leaf =
        filter.path.subAttribute === undefined
          ? definition
          : attributeOf(definition?.subAttributes, filter.path.subAttribute);
      const values = leafValues(value, filter.path.subAttribute, definition);
      if (filter.op === "pr") return values.some(present);
      if (filter.op === "ne")
        return !values.some((item) => compare("eq", item, filter.value, leaf));
      return values.some((item) => compare(filter.op as CompareOperator, item, filter.value, leaf));
    }
  }
}

function lookUp(
  path: AttributePath,
  resource: JsonObject,
  definitions: readonly AttributeDefinition[] | undefined,
): { value: unknown; definition: AttributeDefinition | undefined } {
  if (definitions !== undefined && path.schema === undefined) {
    return {
      value: ownValue(resource, path.attribute),
      definition: attributeOf(definitions, path.attribute),
    };
  }
  const { container, attributes } = scopeOf(resource, path.schema);
  return {
    value: ownValue(container, path.attribute),
    definition: attributeOf(attributes, path.attribute),
  };
}

/** The values a comparison looks at: each value of a multi-valued attribute, its `value` by default. */
function leafValues(
  value: unknown,
  subAttribute: string | undefined,
  definition: AttributeDefinition | undefined,
): unknown[] {
  const items = Array.isArray(value) ? value : [value];
  if (subAttribute !== undefined) return items.map((item) => ownValue(item, subAttribute));
  if (definition?.type === "complex" && definition.multiValued) {
    return items.map((item) => ownValue(item, "value"));
  }
  return items;
}

function present(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

function compare(
  op: CompareOperator,
  actual: unknown,
  expected: CompareValue,
  definition: AttributeDefinition | undefined,
): boolean {
  if (expected === null) return op === "eq" && (actual === undefined || actual === null);
  if (typeof expected === "boolean") {
    return op === "eq" && booleanOf(actual) === expected;
  }
  if (typeof expected === "number") {
    const number =
      typeof actual === "number"
        ? actual
        : typeof actual === "string"
          ? Number(actual)
          : Number.NaN;
    if (Number.isNaN(number)) return false;
    return ordered(op, number, expected);
  }
  if (typeof actual !== "string") return false;
  if (definition?.type === "dateTime" && op !== "co" && op !== "sw" && op !== "ew") {
    // "Chronologically" (RFC 7644 §3.4.2.2): one instant is written many ways (offsets, a
    // fraction of a second or none); text that is not a date compares as text.
    const left = instantOf(actual);
    const right = instantOf(expected);
    if (!Number.isNaN(left) && !Number.isNaN(right)) return ordered(op, left, right);
  }
  const exact = definition?.caseExact === true;
  const left = exact ? actual : asciiLowerCase(actual);
  const right = exact ? expected : asciiLowerCase(expected);
  switch (op) {
    case "co":
      return left.includes(right);
    case "sw":
      return left.startsWith(right);
    case "ew":
      return left.endsWith(right);
    default:
      return ordered(op, left, right);
  }
}

function ordered(op: CompareOperator, left: string | number, right: string | number): boolean {
  switch (op) {
    case "eq":
      return left === right;
    case "gt":
      return left > right;
    case "ge":
      return left >= right;
    case "lt":
      return left < right;
    case "le":
      return left <= right;
    default:
      return false;
  }
}

/** A boolean, or Entra's string boolean (`"True"`, `"false"`), or undefined. */
export function booleanOf(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const lower = value.toLowerCase();
    if (lower === "true") return true;
    if (lower === "false") return false;
  }
  return undefined;
}

/** An xsd:dateTime's shape: date, time, an optional fraction of a second, an optional offset. */
const dateTimeShape = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * The instant an xsd:dateTime names, in ms, else NaN. Only that shape (Date.parse alone reads "3"
 * as a date); without an offset it is UTC, never the server's time zone.
 */
function instantOf(text: string): number {
  const parts = dateTimeShape.exec(text);
  if (parts === null) return Number.NaN;
  // A millisecond is Date's precision: the fraction's further digits are dropped.
  return Date.parse(`${parts[1]}${(parts[2] ?? "").slice(0, 4)}${parts[3] ?? "Z"}`);
}
