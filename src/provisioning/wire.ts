// The wire form of a user in the Provisioning API: the lenient reading of a create or modify
// body into patches (unknown fields kept, numbers kept as their text) and its field names.
import type { JsonValue } from "type-fest";
import { storableText } from "../users/store-rules.ts";
import {
  type UserFieldName,
  type UserPatch,
  userFieldNames,
  userWireNames,
} from "../users/user-record.ts";
import { ProvisioningError } from "./errors.ts";

/** How deep a value of an unknown or wrong-typed field may nest before the record is refused. */
export const maxDepth = 64;

/** TypeScript name (`firstName`) to wire name (`first_name`) for the documented fields. */
export const wireFieldNames: Readonly<Record<UserFieldName, string>> = userWireNames;

/** Wire name (`first_name`) to TypeScript name (`firstName`) for the documented fields. */
const fieldByWireName = new Map<string, UserFieldName>(
  userFieldNames.map((name) => [wireFieldNames[name], name]),
);

/**
 * What is known of the numbers in a parsed body: `plain` (JSON.parse without a reviver: a number
 * may have lost its text, so {@link toPatches} asks for a reparse when it meets one), `revived`
 * (parsed by {@link parseKeepingNumbers}: a number whose text differs from its value's is raw
 * JSON holding that text), `lost` (the runtime gives a reviver no source text: the text is gone),
 * or `parsed` (a framework's body parser in front parsed it: the text is gone, a number that
 * converts exactly is kept as its shortest text, and what the parser made unreadable is an
 * {@link UnreadableParsedBody}).
 */
export type NumberText = "plain" | "revived" | "lost" | "parsed";

/**
 * What {@link toPatches} returns for a body that a parser in front of the API made unreadable: an
 * object of strings from a form parser, a number past 2^53 that lost digits, a BigInt nested in
 * a value. The application's configuration is at fault, not the platform's message: it answers
 * 500 and never 400, which would stall the sync for good on a message that is valid as sent.
 * `reason` names the fault and never quotes the input.
 */
export class UnreadableParsedBody {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

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
 * number that cannot be kept as written (in `extra`, or on a runtime without source text);
 * with `checkStrings`, a string holding a lone surrogate (no UTF-8 database can store it: two such
 * uuids would collide) or U+0000 (which PostgreSQL's text refuses).
 *
 * A `parsed` body (a body parser in front read it) keeps a number that converts exactly (a safe
 * integer, or a decimal, as its shortest text: `12345` gives `"12345"`, as the raw body would),
 * and gives an {@link UnreadableParsedBody} instead of a 400 for what the parser may have made of
 * a valid message: not a user record, an integer past 2^53, a nested BigInt.
 */
export function toPatches(
  body: unknown,
  numbers: NumberText,
  checkStrings: boolean,
): UserPatch[] | ProvisioningError | UnreadableParsedBody | typeof reparseKeepingNumbers {
  if (!Array.isArray(body)) {
    const patch = toPatch(body, numbers, checkStrings);
    return isPatch(patch) ? [patch] : patch;
  }
  if (body.length === 0) {
    return numbers === "parsed"
      ? notAUserRecord
      : new ProvisioningError("invalid_user", "The array holds no user record: nothing to store");
  }
  const patches: UserPatch[] = [];
  for (const element of body) {
    const patch = toPatch(element, numbers, checkStrings);
    if (!isPatch(patch)) return patch;
    patches.push(patch);
  }
  return patches;
}

type PatchOrNot =
  | UserPatch
  | ProvisioningError
  | UnreadableParsedBody
  | typeof reparseKeepingNumbers;

function isPatch(patch: PatchOrNot): patch is UserPatch {
  return !(
    patch instanceof ProvisioningError ||
    patch instanceof UnreadableParsedBody ||
    patch === reparseKeepingNumbers
  );
}

// A JSON parser hands over what the platform sent; a form parser (express.urlencoded()) an object
// whose keys are pieces of the JSON text, and no uuid.
const notAUserRecord = new UnreadableParsedBody(
  "it is not a user record: an object with a uuid that is a non-empty string, or a non-empty array of them, as a form parser such as express.urlencoded() makes of JSON",
);
const lostDigits = new UnreadableParsedBody(
  "it parsed an integer past 2^53, whose digits its value no longer holds",
);
const nestedBigInt = new UnreadableParsedBody("it made a BigInt of a number inside a nested value");

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

function toPatch(record: unknown, numbers: NumberText, checkStrings: boolean): PatchOrNot {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    return numbers === "parsed" ? notAUserRecord : notAnObject();
  }
  const fields = record as Record<string, unknown>;
  const uuid = fields.uuid;
  if (typeof uuid !== "string" || uuid === "") {
    if (numbers === "parsed") return notAUserRecord;
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
    if (
      checkStrings &&
      (!storableText(key) || (typeof value === "string" && !storableText(value)))
    ) {
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
      if (found & big) return nestedBigInt;
      if (numbers === "parsed") {
        // The text is gone: a number whose value holds its digits is kept as its shortest text.
        if (found & inexact) return lostDigits;
      } else if (found & (number | raw)) {
        if (numbers === "plain") return reparseKeepingNumbers;
        if (numbers === "lost" || (field === undefined && found & raw)) {
          return unstorableNumber(
            key,
            numbers === "lost"
              ? "its text is gone (this runtime's JSON.parse gives no source text, as Node 22+, Bun and Deno do)"
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

const deep = 1;
const number = 2;
const raw = 4;
const badString = 8;
const big = 16;
/** A number that is an integer past 2^53: its value may not hold the digits it was written with. */
const inexact = 32;

/** What a non-string value holds, as the flags above; stops at the first depth, string or BigInt fault. */
function inspect(value: unknown, depth: number, checkStrings: boolean): number {
  if (typeof value === "number")
    return Number.isSafeInteger(value) || !Number.isInteger(value) ? number : number | inexact;
  if (typeof value === "bigint") return big;
  if (typeof value === "string") return checkStrings && !storableText(value) ? badString : 0;
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
      if (checkStrings && !storableText(key)) return badString;
      found |= inspect((value as Record<string, unknown>)[key], depth - 1, checkStrings);
      if (found & (deep | badString | big)) return found;
    }
  }
  return found;
}
