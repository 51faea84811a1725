import type { JsonObject, JsonValue } from "type-fest";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { parseJsonBody } from "../version/version-records.ts";

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

/**
 * A path segment for a name the caller chose (a username, a license field). `.` and `..` are
 * refused: URLs resolve them (even percent-encoded), so `user("..")` would call another endpoint.
 *
 * @throws TypeError when `value` is not a non-empty string, RangeError for `.` and `..`.
 */
export function pathSegment(what: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`${what} must be a non-empty string, got ${describe(value)}.`);
  }
  if (value === "." || value === "..") {
    throw new RangeError(`${what} cannot be "${value}": a URL path would resolve it.`);
  }
  return encodeURIComponent(value);
}

function describe(value: unknown): string {
  return typeof value === "string" ? "an empty string" : typeof value;
}
