import type { JsonValue } from "type-fest";
import { type UserPatch, type UserRecord, userFieldNames } from "./user-store.ts";

/**
 * Applies a patch to a stored user (or to nothing): absent fields keep their value, `null` clears.
 * Objects are built with Object.fromEntries so that a key such as `__proto__` stays a plain key.
 */
export function mergeUser(existing: UserRecord | undefined, patch: UserPatch): UserRecord {
  const fields = userFieldNames.flatMap((name) => {
    const value = name in patch ? patch[name] : existing?.[name];
    return typeof value === "string" ? [[name, value] as const] : [];
  });
  const extra = Object.entries({ ...existing?.extra }).filter(([key]) => !hasOwn(patch.extra, key));
  for (const [key, value] of Object.entries(patch.extra ?? {})) {
    if (value !== null) extra.push([key, value]);
  }
  return Object.fromEntries([
    ["uuid", patch.uuid],
    ...fields,
    ...(extra.length > 0
      ? [["extra", Object.fromEntries(extra) as Record<string, JsonValue>]]
      : []),
  ]) as UserRecord;
}

function hasOwn(object: object | undefined, key: string): boolean {
  return object !== undefined && Object.hasOwn(object, key);
}
