// What one PATCH operation's value does to the values already there, beyond setting them: the
// work a request may cost (one budget for all its operations), the values a `remove` with a value
// list names (Entra's form), the merge of a complex attribute, and which value stays primary.
// patch.ts applies the operations; the rules it shares with nothing else are here.
import { asciiLowerCase } from "../users/store-rules.ts";
import { ScimError } from "./errors.ts";
import { type JsonObject, ownValue } from "./evaluate.ts";
import type { Filter } from "./filter.ts";
import { isPrototypeKey, onePrimary, plainObject, setOwn } from "./resource.ts";
import { type AttributeDefinition, attributeOf } from "./schemas.ts";

/**
 * The most units of work one PATCH request may cost: an operation on a multi-valued attribute
 * costs a unit per value there, times the terms of its value filter; a `remove`'s value list, a
 * unit per value there per set of sub-attributes it names, plus one per value listed. Each factor has its own bound (1,000 operations, 1,000 values, 4,096 characters
 * of filter), but not their product: 230 operations of 210-term filters over 1,000 values held the
 * event loop for a minute. An identity provider's PATCH costs a few hundred units.
 */
export const maxPatchWork = 200_000;

/** What is left of a request's {@link maxPatchWork}, and the keys of values it computed. */
export interface PatchWork {
  left: number;
  /** Each object's {@link keyOf}, computed once in a request, however many operations read it. */
  readonly keys: WeakMap<object, string>;
}

/** A request's budget, whole. */
export function patchWork(): PatchWork {
  return { left: maxPatchWork, keys: new WeakMap() };
}

/**
 * A JSON value as text with each object's keys sorted: one key for equal data, whatever the order
 * of its keys. An object's key is computed once per request (`work.keys`), so that operations over
 * one large value serialize it once, not once each.
 */
export function keyOf(value: unknown, work: PatchWork): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  const cached = work.keys.get(value);
  if (cached !== undefined) return cached;
  const text = Array.isArray(value)
    ? `[${value.map((item) => keyOf(item, work)).join(",")}]`
    : `{${Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${keyOf((value as JsonObject)[key], work)}`)
        .join(",")}}`;
  work.keys.set(value, text);
  return text;
}

/**
 * Takes `units` from the request's budget, before the work is done.
 *
 * @throws ScimError 400 `tooMany` when the request would cost more than {@link maxPatchWork}.
 */
export function spend(work: PatchWork, units: number): void {
  work.left -= units;
  if (work.left < 0) {
    throw new ScimError(
      400,
      `This PATCH would evaluate more than ${maxPatchWork} values and filter terms ` +
        "(operations x values of the attribute x terms of the filter); send it as several requests",
      "tooMany",
    );
  }
}

/** How many comparisons a filter makes per value it is evaluated on. */
export function termsOf(filter: Filter): number {
  switch (filter.op) {
    case "and":
    case "or":
      return termsOf(filter.left) + termsOf(filter.right);
    case "not":
      return termsOf(filter.filter);
    case "[]":
      return 1 + termsOf(filter.filter);
    default:
      return 1;
  }
}

/**
 * The values of `existing` that none of `given` names (Entra removes values with
 * `{"op":"Remove","path":"members","value":[{"value":"…"}]}`): a given object names the values
 * holding each of its sub-attributes, strings compared as their caseExact says; a given value that
 * holds nothing names none. Never removes more than named.
 */
export function withoutValues(
  existing: readonly unknown[],
  given: readonly unknown[],
  subAttributes: readonly AttributeDefinition[] | undefined,
  work: PatchWork,
): unknown[] {
  spend(work, existing.length + given.length);
  // The given values grouped by the sub-attributes they name (one group for whole values): each
  // existing value is then looked up once per group, not compared with every given value.
  const groups = new Map<string, { names: string[] | undefined; keys: Set<string> }>();
  for (const named of given) {
    const names =
      typeof named === "object" && named !== null && !Array.isArray(named)
        ? Object.keys(named).sort()
        : undefined;
    if (names?.length === 0) continue; // names no value
    const signature = names === undefined ? "" : JSON.stringify(names);
    let group = groups.get(signature);
    if (group === undefined) {
      group = { names, keys: new Set() };
      groups.set(signature, group);
    }
    const key = namedKey(named, names, subAttributes, work);
    if (key !== undefined) group.keys.add(key);
  }
  spend(work, existing.length * groups.size);
  const lists = [...groups.values()];
  return existing.filter(
    (item) =>
      !lists.some(({ names, keys }) => {
        const key = namedKey(item, names, subAttributes, work);
        return key !== undefined && keys.has(key);
      }),
  );
}

/**
 * The key of `value` over the sub-attributes `names` (strings compared as their caseExact says),
 * or of the whole value when `names` is undefined; undefined when it lacks one of them.
 */
function namedKey(
  value: unknown,
  names: readonly string[] | undefined,
  subAttributes: readonly AttributeDefinition[] | undefined,
  work: PatchWork,
): string | undefined {
  if (names === undefined) return keyOf(value, work);
  let key = "";
  for (const name of names) {
    const held = ownValue(value, name);
    if (held === undefined) return undefined;
    const part =
      typeof held !== "string"
        ? `j${keyOf(held, work)}`
        : attributeOf(subAttributes, name)?.caseExact === true
          ? `s${held}`
          : `s${asciiLowerCase(held)}`;
    key += `${part.length}:${part}`;
  }
  return key;
}

/**
 * A complex attribute after an add or replace of some of its sub-attributes (RFC 7644 §3.5.2.1,
 * .3: the given ones set, the others kept). A sub-attribute given as null is unassigned by a
 * replace, and left as it is by an add (an add never removes). Undefined when nothing is left.
 */
export function mergedComplex(
  existing: unknown,
  normalized: JsonObject | undefined,
  given: unknown,
  op: "add" | "replace",
  definition: AttributeDefinition | undefined,
): JsonObject | undefined {
  const result = plainObject();
  if (typeof existing === "object" && existing !== null && !Array.isArray(existing)) {
    for (const [key, value] of Object.entries(existing)) setOwn(result, key, value);
  }
  if (op === "replace" && typeof given === "object" && given !== null && !Array.isArray(given)) {
    for (const [key, value] of Object.entries(given)) {
      if (value !== null || isPrototypeKey(key)) continue;
      const name = attributeOf(definition?.subAttributes, key)?.name ?? key;
      delete result[name];
    }
  }
  for (const [key, value] of Object.entries(normalized ?? {})) setOwn(result, key, value);
  return Object.keys(result).length === 0 ? undefined : result;
}

/**
 * Keeps one `primary: true` after an operation changed `touched` values (RFC 7644 §3.5.2: a
 * PATCH that sets a value's primary to true clears it on the others): the value the operation left
 * primary wins over one that was primary before, wherever each stands in the list. Without one,
 * the last primary value wins, as in a POST or PUT body.
 */
export function primaryAfter(values: readonly unknown[], touched: readonly boolean[]): unknown[] {
  const made = values.some(
    (value, index) => touched[index] && (value as JsonObject | undefined)?.primary === true,
  );
  if (!made) return onePrimary([...values]);
  return onePrimary(
    values.map((value, index) => {
      if (touched[index] || (value as JsonObject | undefined)?.primary !== true) return value;
      const copy = { ...(value as JsonObject) };
      delete copy.primary;
      return copy;
    }),
  );
}
