// What a client reads: the resource with `id`, `schemas` and `meta` (its `version` a weak ETag of
// the content), cut down by `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9).
import { jsonCopy } from "../internal/json-copy.ts";
import { badValue } from "./errors.ts";
import { type JsonObject, ownKey, ownValue } from "./evaluate.ts";
import type { ScimTimes } from "./mapping.ts";
import { copyResource, plainObject, setOwn } from "./resource.ts";
import { enterpriseSchema, schemaOf, userSchema } from "./schemas.ts";

/** A user as served: the body, its ETag, and the body's JSON text (version included). */
export interface ServedUser {
  body: JsonObject;
  version: string;
  text: string;
}

/**
 * The served form of a user: `id`, `schemas`, its attributes and `meta`, whose `version` is the
 * ETag of the rest. The body is serialized once: its text without the version is what the ETag
 * hashes, and the version is spliced in as the last member of `meta`, the body's last key (an
 * object's string keys keep their insertion order; integer-like keys, the only ones that go
 * first, are never `meta`). `resource` becomes part of the body: the caller gives it up.
 */
export function served(
  id: string,
  resource: JsonObject,
  times: ScimTimes,
  location: string,
): ServedUser {
  const schemas = [userSchema];
  if (ownKey(resource, enterpriseSchema) !== undefined) schemas.push(enterpriseSchema);
  for (const key of Object.keys(resource)) {
    if (key.includes(":") && schemaOf(key) === undefined) schemas.push(key);
  }
  const body = plainObject();
  body.schemas = schemas;
  body.id = id;
  for (const key of Object.keys(resource)) {
    if (key !== "meta") setOwn(body, key, resource[key]);
  }
  const meta: JsonObject = { resourceType: "User" };
  if (times.created !== undefined) meta.created = times.created;
  if (times.lastModified !== undefined) meta.lastModified = times.lastModified;
  meta.location = location;
  body.meta = meta;
  const unversioned = JSON.stringify(body);
  const version = versionOf(unversioned);
  meta.version = version;
  // `…"location":"…"}}` becomes `…"location":"…","version":"…"}}`.
  const text = `${unversioned.slice(0, -2)},"version":${JSON.stringify(version)}}}`;
  return { body, version, text };
}

/**
 * A weak ETag of a served resource's content (FNV-1a over its JSON text, without the version): it changes with every
 * stored change, including one made through the Provisioning API. Not a secret, not a checksum.
 */
function versionOf(text: string): string {
  let high = 0x811c9dc5;
  let low = 0x01000193;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    high = Math.imul(high ^ code, 0x01000193) >>> 0;
    low = Math.imul(low ^ code, 0x5bd1e995) >>> 0;
  }
  return `W/"${high.toString(16).padStart(8, "0")}${low.toString(16).padStart(8, "0")}"`;
}

/** Parsed `attributes` or `excludedAttributes`: each entry's schema, attribute and sub-attribute. */
export type AttributeList = readonly {
  schema: string | undefined;
  attribute: string | undefined;
  sub: string | undefined;
}[];

/**
 * Reads a comma-separated attribute list; URN-qualified names allowed (a bare URN names the
 * whole extension).
 *
 * @throws ScimError 400 `invalidValue` for an entry that is no attribute name.
 */
export function parseAttributeList(text: string | null): AttributeList | undefined {
  if (text === null || text.trim() === "") return undefined;
  if (text.length > 4096) throw badValue("The attribute list is too long");
  return text.split(",").map((raw) => {
    const entry = raw.trim();
    const whole = schemaOf(entry);
    if (whole !== undefined) return { schema: whole, attribute: undefined, sub: undefined };
    const colon = entry.lastIndexOf(":");
    const schema =
      colon === -1 ? undefined : (schemaOf(entry.slice(0, colon)) ?? entry.slice(0, colon));
    const [attribute, sub, more] = entry.slice(colon + 1).split(".");
    if (attribute === undefined || !/^[A-Za-z$][\w$-]*$/.test(attribute) || more !== undefined) {
      throw badValue(`"${entry}" is not an attribute name`);
    }
    return { schema: schema === userSchema ? undefined : schema, attribute, sub };
  });
}

/** The served resource cut down to `attributes`, or without `excluded`. `id` and `schemas` stay. */
export function project(
  body: JsonObject,
  attributes: AttributeList | undefined,
  excluded: AttributeList | undefined,
): JsonObject {
  if (attributes === undefined && excluded === undefined) return body;
  if (attributes !== undefined) {
    const result = plainObject();
    result.schemas = body.schemas;
    result.id = body.id;
    for (const { schema, attribute, sub } of attributes)
      copyPart(body, result, schema, attribute, sub);
    return result;
  }
  const result = copyResource(body);
  for (const { schema, attribute, sub } of excluded ?? []) {
    const container = schema === undefined ? result : ownValue(result, schema);
    if (attribute === undefined) {
      const key = schema === undefined ? undefined : ownKey(result, schema);
      if (key !== undefined) delete result[key];
      continue;
    }
    if (typeof container !== "object" || container === null) continue;
    const key = ownKey(container as JsonObject, attribute);
    if (key === undefined || (schema === undefined && (key === "id" || key === "schemas")))
      continue;
    if (sub === undefined) delete (container as JsonObject)[key];
    else removeSub((container as JsonObject)[key], sub);
  }
  return result;
}

function copyPart(
  from: JsonObject,
  to: JsonObject,
  schema: string | undefined,
  attribute: string | undefined,
  sub: string | undefined,
): void {
  const sourceKey = schema === undefined ? undefined : ownKey(from, schema);
  const source =
    schema === undefined ? from : sourceKey === undefined ? undefined : from[sourceKey];
  if (typeof source !== "object" || source === null) return;
  let target = to;
  if (schema !== undefined) {
    const existing = to[sourceKey as string];
    target =
      typeof existing === "object" && existing !== null ? (existing as JsonObject) : plainObject();
    setOwn(to, sourceKey as string, target);
    if (attribute === undefined) {
      setOwn(to, sourceKey as string, jsonCopy(source));
      return;
    }
  }
  const key = ownKey(source as JsonObject, attribute as string);
  if (key === undefined) return;
  const value = (source as JsonObject)[key];
  if (sub === undefined) {
    setOwn(target, key, jsonCopy(value));
    return;
  }
  if (Array.isArray(value)) {
    const previous = Array.isArray(target[key]) ? (target[key] as JsonObject[]) : undefined;
    setOwn(
      target,
      key,
      value.map((item, index) => {
        const kept = { ...(previous?.[index] ?? {}) } as JsonObject;
        const subKey = ownKey(item as JsonObject, sub);
        if (subKey !== undefined) setOwn(kept, subKey, (item as JsonObject)[subKey]);
        return kept;
      }),
    );
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const subKey = ownKey(value as JsonObject, sub);
  if (subKey === undefined) return;
  const existing = target[key];
  const kept =
    typeof existing === "object" && existing !== null ? (existing as JsonObject) : plainObject();
  setOwn(kept, subKey, (value as JsonObject)[subKey]);
  setOwn(target, key, kept);
}

function removeSub(value: unknown, sub: string): void {
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const key = ownKey(item as JsonObject, sub);
    if (key !== undefined) delete (item as JsonObject)[key];
  }
}
