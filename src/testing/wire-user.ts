import type { JsonValue } from "type-fest";
import { mergeUser } from "../provisioning/merge-user.ts";
import { type UserRecord, userFieldNames } from "../provisioning/user-record.ts";
import { toPatches, wireFieldNames } from "../provisioning/wire.ts";

/**
 * A user read back in the wire's snake_case names, by the Provisioning API's own lenient rule
 * (one home for it: the core's parser), or undefined when it is not one JSON object with a uuid.
 * Undocumented fields are not compared, so they are not parsed either.
 */
export function fromWireUser(json: unknown): UserRecord | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const documented = Object.fromEntries(
    ["uuid", ...userFieldNames.map((name) => wireFieldNames[name])].flatMap((name) =>
      Object.hasOwn(json, name) ? [[name, (json as Record<string, unknown>)[name]]] : [],
    ),
  );
  const patches = toPatches(documented, "plain", false);
  return Array.isArray(patches) && patches[0] ? mergeUser(undefined, patches[0]) : undefined;
}

// Never compared: an application may hash the password, and then names another format.
const comparedFields = userFieldNames.filter(
  (name) => name !== "password" && name !== "passwordFormat",
);

/**
 * How a user read back differs from what was sent, in one line that names the field, the
 * expected and the found value: undefined when they agree. `expected` undefined means the user
 * should be gone. The password and its format are not compared, nor undocumented fields.
 */
export function describeDifference(
  expected: UserRecord | undefined,
  found: UserRecord | undefined,
): string | undefined {
  if (expected === undefined) return found === undefined ? undefined : "still stored";
  if (found === undefined) return "not found (404)";
  for (const name of ["uuid", ...comparedFields] as const) {
    if (expected[name] !== found[name]) {
      const wireName = name === "uuid" ? name : wireFieldNames[name];
      return `${wireName}: expected ${show(expected[name])}, found ${show(found[name])}`;
    }
  }
  return undefined;
}

function show(value: string | undefined): string {
  return value === undefined ? "absent" : JSON.stringify(value);
}
