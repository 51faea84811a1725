import type { JsonValue } from "type-fest";
import { ProvisioningError } from "./errors.ts";
import { type UserFieldName, type UserPatch, userFieldNames } from "./user-store.ts";

/** How deep a value of an unknown or wrong-typed field may nest before the record is refused. */
export const maxDepth = 64;

/** TypeScript name (`firstName`) to wire name (`first_name`) for the documented fields. */
export const wireFieldNames = Object.fromEntries(
  userFieldNames.map((name) => [
    name,
    name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`),
  ]),
) as Record<UserFieldName, string>;

/** Wire name (`first_name`) to TypeScript name (`firstName`) for the documented fields. */
const fieldByWireName = new Map<string, UserFieldName>(
  userFieldNames.map((name) => [wireFieldNames[name], name]),
);

/**
 * Turns a parsed JSON body into the patches to store: one for an object, one per element for an
 * array (validated whole before anything is stored, so a bad element stores nothing).
 *
 * The lenient rule: the platform's LDAP data may carry a wrong type, and a 400 would stall the
 * whole sync, so a documented field that is neither a string nor null is kept as its JSON text
 * (`42` becomes `"42"`, `true` becomes `"true"`, an object its JSON). `null` clears the field.
 * Unknown fields go to `extra` under their wire names, built with Object.fromEntries so that
 * `__proto__` and `constructor` stay plain keys. Refused (400): a body that is not an object (or
 * an array of objects), a uuid that is missing, empty or not a string, and a value nested deeper
 * than {@link maxDepth} levels, which no store could serialize.
 */
export function toPatches(body: unknown): UserPatch[] | ProvisioningError {
  if (!Array.isArray(body)) {
    const patch = toPatch(body);
    return patch instanceof ProvisioningError ? patch : [patch];
  }
  const patches: UserPatch[] = [];
  for (const element of body) {
    const patch = toPatch(element);
    if (patch instanceof ProvisioningError) return patch;
    patches.push(patch);
  }
  return patches;
}

function toPatch(record: unknown): UserPatch | ProvisioningError {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    return new ProvisioningError(
      "invalid_user",
      "A user record must be a JSON object with a uuid (create also takes an array of them)",
    );
  }
  const fields = record as Record<string, unknown>;
  const uuid = fields.uuid;
  if (typeof uuid !== "string" || uuid === "") {
    return new ProvisioningError(
      "invalid_uuid",
      "Each user record needs a uuid that is a non-empty string",
    );
  }
  const patch: UserPatch = { uuid };
  let extra: [string, JsonValue][] | undefined;
  // for-in allocates no key array; the own-property check keeps inherited keys out.
  for (const key in fields) {
    if (key === "uuid" || !Object.hasOwn(fields, key)) continue;
    const value = fields[key] as JsonValue;
    const field = fieldByWireName.get(key);
    if (field !== undefined && (typeof value === "string" || value === null)) {
      patch[field] = value;
      continue;
    }
    if (typeof value === "object" && value !== null && tooDeep(value, maxDepth)) {
      return new ProvisioningError(
        "invalid_user",
        `A field of this user record nests deeper than ${maxDepth} levels`,
      );
    }
    if (field !== undefined) patch[field] = JSON.stringify(value);
    else if (extra === undefined) extra = [[key, value]];
    else extra.push([key, value]);
  }
  if (extra !== undefined) patch.extra = Object.fromEntries(extra);
  return patch;
}

function tooDeep(value: JsonValue, depth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (depth === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (tooDeep(child as JsonValue, depth - 1)) return true;
  }
  return false;
}
