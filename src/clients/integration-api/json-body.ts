// Reading an answer's body as JSON, bounded in depth and prototype-safe.
import type { JsonObject, JsonValue } from "type-fest";
import { ResponseShapeError } from "./errors.ts";
import type { ApiResponse } from "./http.ts";

// Reading the bodies of 2xx answers, shared by every client: one place parses JSON from the wire.

/**
 * How deep a 2xx answer may nest. The platform's records nest a few levels; a deeper value would
 * be kept whole in a record's `extra`, where serializing it throws a RangeError far from here.
 */
export const maxJsonDepth = 64;

/**
 * Parses a 2xx body as JSON, or throws a {@link ResponseShapeError} that carries it raw: for text
 * that is not JSON and for a value nested deeper than {@link maxJsonDepth}.
 */
export function parseJsonBody(response: ApiResponse): JsonValue {
  let value: JsonValue;
  try {
    value = JSON.parse(response.body) as JsonValue;
  } catch {
    throw new ResponseShapeError(response, "it is not JSON");
  }
  if (depthExceeds(value, maxJsonDepth)) {
    throw new ResponseShapeError(response, `it nests deeper than ${maxJsonDepth} levels`);
  }
  return value;
}

/** Whether `value` nests deeper than `limit`, walked without recursion (the depth is the attack). */
function depthExceeds(value: JsonValue, limit: number): boolean {
  const stack: [JsonValue, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses a 2xx body that must be a JSON object, or throws a {@link ResponseShapeError}. */
export function readJsonObject(response: ApiResponse): JsonObject {
  const wire = parseJsonBody(response);
  if (!isJsonObject(wire)) throw new ResponseShapeError(response, "expected a JSON object");
  return wire;
}

/**
 * The value of `name` in `wire`, matched exactly first, else case-insensitively: the Identity
 * API is written in Go, whose JSON decoder matches keys that way, so a server may send `dn` for
 * `DN`. Only own keys count, so `constructor` or `__proto__` never reach the prototype.
 */
export function field(wire: JsonObject, name: string): JsonValue | undefined {
  if (Object.hasOwn(wire, name)) return wire[name];
  const lower = name.toLowerCase();
  const key = Object.keys(wire).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : wire[key];
}
