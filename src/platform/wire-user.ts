import type { JsonValue } from "type-fest";
import { toPatches, wireFieldNames } from "../provisioning/wire.ts";
import { mergeUser } from "../users/merge-user.ts";
import { type UserRecord, userFieldNames } from "../users/user-record.ts";

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

/** The user as the platform sends it: snake_case names, undocumented fields as they came. */
export function toWireUser(user: UserRecord): Record<string, JsonValue> {
  // Object.fromEntries keeps an undocumented field named `__proto__` an own, plain key.
  return Object.fromEntries([
    ["uuid", user.uuid],
    ...userFieldNames.flatMap((name) => {
      const value = user[name];
      return value === undefined ? [] : [[wireFieldNames[name], value]];
    }),
    ...Object.entries(user.extra ?? {}),
  ]);
}
