import type { JsonValue } from "type-fest";
import { type UserPatch, type UserRecord, userFieldNames } from "./user-record.ts";

/**
 * Applies a patch to a stored user (or to nothing): absent fields keep their value, `null` clears.
 * `extra` is built with Object.fromEntries so that a key such as `__proto__` stays a plain key.
 * Plain loops rather than entries and spreads: this runs once for every create and modify.
 */
export function mergeUser(existing: UserRecord | undefined, patch: UserPatch): UserRecord {
  const user: UserRecord = { uuid: patch.uuid };
  for (const name of userFieldNames) {
    const value = name in patch ? patch[name] : existing?.[name];
    if (typeof value === "string") user[name] = value;
  }
  if (existing?.extra === undefined && patch.extra === undefined) return user;
  const extra = Object.entries({ ...existing?.extra }).filter(([key]) => !hasOwn(patch.extra, key));
  for (const [key, value] of Object.entries(patch.extra ?? {})) {
    if (value !== null) extra.push([key, value]);
  }
  if (extra.length > 0) user.extra = Object.fromEntries(extra) as Record<string, JsonValue>;
  return user;
}

function hasOwn(object: object | undefined, key: string): boolean {
  return object !== undefined && Object.hasOwn(object, key);
}
