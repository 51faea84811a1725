// A User resource as the server keeps it: attribute names in their schema's case, values of the
// schema's types (Entra's string booleans read as booleans), multi-valued attributes as arrays,
// read-only and write-only attributes left out, and no key that could reach a prototype. Bodies of
// POST and PUT, and the values of PATCH operations, all pass through `normalizeValue`.
import { jsonCopy } from "../internal/json-copy.ts";
import { storableText } from "../users/store-rules.ts";
import { badSyntax, badValue } from "./errors.ts";
import { booleanOf, type JsonObject, ownKey, ownValue } from "./evaluate.ts";
import {
  type AttributeDefinition,
  attributeOf,
  enterpriseAttributes,
  enterpriseSchema,
  schemaOf,
  userAttributes,
  userSchema,
} from "./schemas.ts";

/** Keys never honoured in a body, at any depth: they name or reach an object's prototype. */
const prototypeKeys = new Set(["__proto__", "constructor", "prototype"]);

/** Whether `key` is one the server drops (`__proto__`, `constructor`, `prototype`). */
export function isPrototypeKey(key: string): boolean {
  return prototypeKeys.has(key);
}

/** The deepest a value of a body may nest. */
const maxDepth = 32;

/** A JSON object built with no prototype key, so that assigning into it can never reach one. */
export function plainObject(): JsonObject {
  return {};
}

/**
 * Sets `object[key]` as an own data property, whatever the key. Only `__proto__` is an accessor
 * of Object.prototype, so every other key is a plain assignment (defineProperty costs more, on
 * every attribute of every answer).
 */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key !== "__proto__") {
    object[key] = value;
    return;
  }
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * Reads a value given for an attribute: checks its type, reads Entra's string booleans, and names
 * sub-attributes in their schema's case. `null` (unassigned) gives undefined. A string attribute
 * given a number or a boolean keeps its JSON text (lenient: what an admin's template sends).
 *
 * @throws ScimError 400 `invalidValue` for a value the attribute cannot hold.
 */
export function normalizeValue(
  definition: AttributeDefinition | undefined,
  value: unknown,
  name: string,
  depth = 0,
): unknown {
  if (depth > maxDepth) throw badValue(`The value of ${name} is nested too deep`);
  if (value === null || value === undefined) return undefined;
  if (definition === undefined) return sanitized(value, name, depth);
  if (definition.multiValued) {
    const items = Array.isArray(value) ? value : [value];
    const normalized = items
      .map((item) => normalizeSingle(definition, item, name, depth + 1))
      .filter((item) => item !== undefined);
    return normalized.length === 0 ? undefined : onePrimary(normalized);
  }
  // Entra sends a manager as a one-element array of {value, $ref}.
  if (definition.type === "complex" && Array.isArray(value)) {
    if (value.length > 1) throw badValue(`${name} takes one value, not a list`);
    return normalizeSingle(definition, value[0], name, depth + 1);
  }
  return normalizeSingle(definition, value, name, depth + 1);
}

function normalizeSingle(
  definition: AttributeDefinition,
  value: unknown,
  name: string,
  depth: number,
): unknown {
  if (value === null || value === undefined) return undefined;
  refuseNonFinite(value, name);
  switch (definition.type) {
    case "boolean": {
      const boolean = booleanOf(value);
      if (boolean === undefined) throw badValue(`${name} must be a boolean`);
      return boolean;
    }
    case "integer":
    case "decimal":
      if (typeof value === "number") return value;
      if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) {
        return Number(value);
      }
      throw badValue(`${name} must be a number`);
    case "complex": {
      // A multi-valued attribute given bare strings (`"emails": ["a@b"]`), or a manager given
      // its id alone: the string is the `value` sub-attribute.
      if (typeof value === "string" && attributeOf(definition.subAttributes, "value")) {
        return { value };
      }
      if (typeof value !== "object" || Array.isArray(value)) {
        throw badValue(`${name} must be an object`);
      }
      const result = plainObject();
      for (const [key, item] of Object.entries(value)) {
        if (isPrototypeKey(key)) continue;
        const sub = attributeOf(definition.subAttributes, key);
        if (sub?.mutability === "readOnly" && definition.name !== "meta") continue;
        const normalized = normalizeValue(sub, item, `${name}.${key}`, depth + 1);
        if (normalized !== undefined) setOwn(result, sub?.name ?? key, normalized);
      }
      return Object.keys(result).length === 0 ? undefined : result;
    }
    default:
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
      throw badValue(`${name} must be a string`);
  }
}

/** Keeps `primary: true` on one value at most (RFC 7643 §2.4): the last one given wins. */
export function onePrimary(values: unknown[]): unknown[] {
  let primary = -1;
  values.forEach((value, index) => {
    if ((value as JsonObject | undefined)?.primary === true) primary = index;
  });
  if (primary === -1) return values;
  return values.map((value, index) => {
    if (index === primary || (value as JsonObject).primary !== true) return value;
    const copy = { ...(value as JsonObject) };
    delete copy.primary;
    return copy;
  });
}

/**
 * JSON text such as `1e400` parses to Infinity, which no JSON answer can carry (it is written
 * `null`): refused rather than stored as another value.
 */
function refuseNonFinite(value: unknown, name: string): void {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw badValue(`${name} holds a number beyond what JSON can carry (such as 1e400)`);
  }
}

/** A JSON value with no prototype key at any depth, for attributes outside the schemas. */
function sanitized(value: unknown, name: string, depth: number): unknown {
  if (depth > maxDepth) throw badValue(`The value of ${name} is nested too deep`);
  if (Array.isArray(value)) return value.map((item) => sanitized(item, name, depth + 1));
  refuseNonFinite(value, name);
  if (typeof value !== "object" || value === null) return value;
  const result = plainObject();
  for (const [key, item] of Object.entries(value)) {
    if (!isPrototypeKey(key)) setOwn(result, key, sanitized(item, name, depth + 1));
  }
  return result;
}

/**
 * The resource a POST or PUT body describes: known attributes in their schema's case, the
 * enterprise extension under its URN, other extensions kept as sent, and `id`, `meta`, `groups`,
 * `schemas` and `password` left out (read-only, computed, or never stored).
 *
 * @throws ScimError 400 `invalidSyntax` for a body that is not an object, `invalidValue` for a
 * value of the wrong type.
 */
export function normalizeResource(body: unknown): JsonObject {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badSyntax("The body must be a JSON object: a SCIM User");
  }
  const resource = plainObject();
  for (const [key, value] of Object.entries(body)) {
    if (isPrototypeKey(key)) continue;
    const urn = schemaOf(key);
    if (urn === enterpriseSchema) {
      const extension = normalizeExtension(value, enterpriseAttributes, key);
      if (extension !== undefined) setOwn(resource, enterpriseSchema, extension);
      continue;
    }
    if (urn === userSchema) {
      // The core schema's attributes given under its URN: taken as top-level ones.
      const inner = normalizeExtension(value, userAttributes, key);
      for (const [name, item] of Object.entries(inner ?? {})) setOwn(resource, name, item);
      continue;
    }
    if (key.includes(":")) {
      const extension = normalizeValue(undefined, value, key);
      if (extension !== undefined) setOwn(resource, key, extension);
      continue;
    }
    const definition = attributeOf(userAttributes, key);
    if (definition !== undefined && skippedOnWrite(definition)) continue;
    if (key.toLowerCase() === "schemas") continue;
    const normalized = normalizeValue(definition, value, key);
    if (normalized !== undefined) setOwn(resource, definition?.name ?? key, normalized);
  }
  checkResourceBounds(resource);
  refuseBlankUserName(resource);
  return resource;
}

/**
 * Throws 400 `invalidValue` for a userName that is empty or only white space (RFC 7643 §4.1.1:
 * "Each User MUST include a non-empty userName value"). Its absence is the caller's to judge.
 */
export function refuseBlankUserName(resource: JsonObject): void {
  const { userName } = resource;
  if (typeof userName === "string" && userName.trim() === "") {
    throw badValue("userName must not be empty");
  }
}

function normalizeExtension(
  value: unknown,
  attributes: readonly AttributeDefinition[],
  name: string,
): JsonObject | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badValue(`${name} must be an object`);
  }
  const result = plainObject();
  for (const [key, item] of Object.entries(value)) {
    if (isPrototypeKey(key)) continue;
    const definition = attributeOf(attributes, key);
    if (definition !== undefined && skippedOnWrite(definition)) continue;
    const normalized = normalizeValue(definition, item, `${name}:${key}`);
    if (normalized !== undefined) setOwn(result, definition?.name ?? key, normalized);
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

/** Read-only attributes (id, meta, groups) and the write-only password are not stored. */
export function skippedOnWrite(definition: AttributeDefinition): boolean {
  return definition.mutability === "readOnly" || definition.mutability === "writeOnly";
}

/** The objects holding a resource's attributes of a known schema (core, enterprise), with them. */
function schemaContainers(resource: JsonObject): [readonly AttributeDefinition[], JsonObject][] {
  const containers: [readonly AttributeDefinition[], JsonObject][] = [[userAttributes, resource]];
  const enterprise = ownValue(resource, enterpriseSchema);
  if (typeof enterprise === "object" && enterprise !== null && !Array.isArray(enterprise)) {
    containers.push([enterpriseAttributes, enterprise as JsonObject]);
  }
  return containers;
}

/** The most values one multi-valued attribute of a user may hold (emails, phoneNumbers, …). */
export const maxValuesPerAttribute = 1000;
/** The largest user, in characters of its JSON, that a POST, PUT or PATCH may leave. */
export const maxResourceLength = 512 * 1024;

/**
 * Throws 400 `invalidValue` when a multi-valued attribute holds more than
 * {@link maxValuesPerAttribute} values or the resource's JSON exceeds {@link maxResourceLength}
 * characters: a bound on what one user costs to store, serve and PATCH, whatever the body limit.
 */
export function checkResourceBounds(resource: JsonObject): void {
  for (const [attributes, container] of schemaContainers(resource)) {
    for (const [key, value] of Object.entries(container)) {
      if (Array.isArray(value) && value.length > maxValuesPerAttribute) {
        const name = attributeOf(attributes, key)?.name ?? key;
        throw badValue(`${name} may hold at most ${maxValuesPerAttribute} values`);
      }
    }
  }
  if (!storableValue(resource)) {
    throw badValue(
      "A string of this user holds U+0000 or a lone UTF-16 surrogate, which no store keeps as sent",
    );
  }
  if (JSON.stringify(resource).length > maxResourceLength) {
    throw badValue(`A user may take at most ${maxResourceLength} characters of JSON`);
  }
}

/** Whether every string and key of a JSON value can be stored as sent (see storableText). */
function storableValue(value: unknown): boolean {
  if (typeof value === "string") return storableText(value);
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) return value.every(storableValue);
  return Object.entries(value).every(([key, item]) => storableText(key) && storableValue(item));
}

/**
 * `resource` without the attributes a client never reads (`returned: "never"`: the password),
 * wherever an older version or another writer left them: nothing serves or filters on them.
 * Deletes from `resource` itself; an extension object holding one is replaced by a copy without
 * it, so that the object `resource` was copied from (a stored user's) keeps it.
 */
export function withoutNeverReturned(resource: JsonObject): JsonObject {
  for (const [attributes, container] of schemaContainers(resource)) {
    const never = Object.keys(container).filter(
      (key) => attributeOf(attributes, key)?.returned === "never",
    );
    if (never.length === 0) continue;
    const target = container === resource ? resource : { ...container };
    for (const key of never) delete target[key];
    if (target !== container)
      setOwn(resource, ownKey(resource, enterpriseSchema) as string, target);
  }
  return resource;
}

/** A deep copy of a resource (JSON values only). */
export function copyResource(resource: JsonObject): JsonObject {
  return jsonCopy(resource);
}

export { ownKey };
