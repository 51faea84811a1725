import type { JsonValue } from "type-fest";
import { ProvisioningError } from "./errors.ts";
import { type UserFieldName, type UserPatch, userFieldNames } from "./user-record.ts";

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
 * What is known of the numbers in a parsed body: `plain` (JSON.parse without a reviver: a number
 * may have lost its text, so {@link toPatches} asks for a reparse when it meets one), `revived`
 * (parsed by {@link parseKeepingNumbers}: a number whose text differs from its value's is raw
 * JSON holding that text), or `lost` (a framework's body parser parsed it, or the runtime gives a
 * reviver no source text: the text is gone).
 */
export type NumberText = "plain" | "revived" | "lost";

/** Returned by {@link toPatches} for a `plain` body with a number in it: parse it again, keeping numbers' text. */
export const reparseKeepingNumbers = Symbol("reparseKeepingNumbers");

interface RawJson {
  rawJSON(text: string): unknown;
  isRawJSON(value: unknown): boolean;
}
// JSON.parse source text access (Node 22+, Bun, Deno); ES2023's lib does not declare it yet.
const json = JSON as unknown as Partial<RawJson>;
const rawJson = typeof json.rawJSON === "function" ? (json as RawJson) : undefined;

/**
 * Parses JSON, keeping the source text of every number whose value would print differently
 * (`1.50`, `1e2`, `12345678901234567890`) as raw JSON, which JSON.stringify writes back as it came.
 * Undefined where the runtime gives a reviver no source text: numbers cannot be kept then.
 */
export function parseKeepingNumbers(text: string): unknown {
  if (rawJson === undefined) return undefined;
  const { rawJSON } = rawJson;
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined && String(value) !== context.source
      ? rawJSON(context.source)
      : value,
  );
}

/**
 * Turns a parsed JSON body into the patches to store: one for an object, one per element for an
 * array (create and modify alike; validated whole before anything is stored, so a bad element
 * stores nothing, and an empty array is refused).
 *
 * The lenient rule: the platform's LDAP data may carry a wrong type, and a 400 would stall the
 * whole sync, so a documented field that is neither a string nor null is kept as its JSON text,
 * numbers exactly as they were written (`1.50` stays `"1.50"`, `true` becomes `"true"`, an object
 * its JSON). `null` clears the field. Unknown fields go to `extra` under their wire names, built
 * with Object.fromEntries so that `__proto__` and `constructor` stay plain keys. Refused (400):
 * a body that is not an object or a non-empty array of them; a uuid that is missing, empty or not
 * a string; a value nested deeper than {@link maxDepth} levels, which no store could serialize; a
 * number that cannot be kept as written (in `extra`, or when a body parser in front parsed it);
 * with `checkStrings`, a string holding a lone surrogate (no UTF-8 database can store it: two such
 * uuids would collide) or U+0000 (which PostgreSQL's text refuses).
 */
export function toPatches(
  body: unknown,
  numbers: NumberText,
  checkStrings: boolean,
): UserPatch[] | ProvisioningError | typeof reparseKeepingNumbers {
  if (!Array.isArray(body)) {
    const patch = toPatch(body, numbers, checkStrings);
    return patch instanceof ProvisioningError || patch === reparseKeepingNumbers ? patch : [patch];
  }
  if (body.length === 0) {
    return new ProvisioningError(
      "invalid_user",
      "The array holds no user record: nothing to store",
    );
  }
  const patches: UserPatch[] = [];
  for (const element of body) {
    const patch = toPatch(element, numbers, checkStrings);
    if (patch instanceof ProvisioningError || patch === reparseKeepingNumbers) return patch;
    patches.push(patch);
  }
  return patches;
}

const notAnObject = () =>
  new ProvisioningError(
    "invalid_user",
    "A user record must be a JSON object with a uuid, or a non-empty array of them",
  );
const unstorableString = () =>
  new ProvisioningError(
    "invalid_user",
    "A string of this user record holds a lone UTF-16 surrogate or U+0000, which cannot be stored as sent",
  );

function toPatch(
  record: unknown,
  numbers: NumberText,
  checkStrings: boolean,
): UserPatch | ProvisioningError | typeof reparseKeepingNumbers {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return notAnObject();
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
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key] as JsonValue;
    if (checkStrings && (!storable(key) || (typeof value === "string" && !storable(value)))) {
      return unstorableString();
    }
    if (key === "uuid") continue;
    const field = fieldByWireName.get(key);
    if (field !== undefined && (typeof value === "string" || value === null)) {
      patch[field] = value;
      continue;
    }
    // A body parser that keeps big integers exact (json-bigint) hands over a BigInt, on which
    // JSON.stringify throws. Its text is exact: a documented field keeps it, and extra takes it as
    // a number where that is exact, under the rule for any number there.
    if (typeof value === "bigint") {
      if (field !== undefined) patch[field] = String(value);
      else if (Number.isSafeInteger(Number(value))) {
        extra ??= [];
        extra.push([key, Number(value)]);
      } else return unstorableNumber(key, "send it as a string");
      continue;
    }
    if (typeof value !== "string" && value !== null) {
      const found = inspect(value, maxDepth, checkStrings);
      if (found & deep) {
        return new ProvisioningError(
          "invalid_user",
          `A field of this user record nests deeper than ${maxDepth} levels`,
        );
      }
      if (found & badString) return unstorableString();
      if (found & big) return unstorableNumber(key, mountBeforeTheParser);
      if (found & (number | raw)) {
        if (numbers === "plain") return reparseKeepingNumbers;
        if (numbers === "lost" || (field === undefined && found & raw)) {
          return unstorableNumber(
            key,
            numbers === "lost"
              ? "its text is gone (a body parser in front of the Provisioning API parsed it, or this runtime's JSON.parse gives no source text, as Node 22+, Bun and Deno do); mount the API before the parser"
              : "send it as a string",
          );
        }
      }
    }
    if (field !== undefined) patch[field] = JSON.stringify(value);
    else if (extra === undefined) extra = [[key, value]];
    else extra.push([key, value]);
  }
  if (extra !== undefined) patch.extra = Object.fromEntries(extra);
  return patch;
}

const unstorableNumber = (key: string, reason: string) =>
  new ProvisioningError(
    "invalid_user",
    `The number in "${key}" cannot be stored as it was written: ${reason}`,
  );
const mountBeforeTheParser =
  "a body parser in front of the Provisioning API made a BigInt of it inside a nested value; mount the API before the parser";

const deep = 1;
const number = 2;
const raw = 4;
const badString = 8;
const big = 16;

/** What a non-string value holds, as the flags above; stops at the first depth, string or BigInt fault. */
function inspect(value: unknown, depth: number, checkStrings: boolean): number {
  if (typeof value === "number") return number;
  if (typeof value === "bigint") return big;
  if (typeof value === "string") return checkStrings && !storable(value) ? badString : 0;
  if (typeof value !== "object" || value === null) return 0;
  if (rawJson?.isRawJSON(value)) return raw;
  if (depth === 0) return deep;
  let found = 0;
  if (Array.isArray(value)) {
    for (const child of value) {
      found |= inspect(child, depth - 1, checkStrings);
      if (found & (deep | badString | big)) return found;
    }
  } else {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (checkStrings && !storable(key)) return badString;
      found |= inspect((value as Record<string, unknown>)[key], depth - 1, checkStrings);
      if (found & (deep | badString | big)) return found;
    }
  }
  return found;
}

/** Whether a string can be stored as sent in any UTF-8 database: no lone surrogate, no U+0000. */
function storable(text: string): boolean {
  // isWellFormed is ES2024 (Node 20+, Bun, Deno); the compiler's lib stops at ES2023.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed() && !text.includes("\0");
}
