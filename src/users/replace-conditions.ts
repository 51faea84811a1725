// The conditions of a conditional `UserStore.replace` (ReplaceOptions), one home for the three
// bundled stores: each reads what a condition names inside its own atomic step, and asks here.
import { jsonEqual } from "../internal/json-equal.ts";
import type { UserRecord } from "./user-record.ts";
import type { ReplaceOptions } from "./user-store.ts";

/** Whether the stored user (undefined: none) is the one `options.expected` names, if it names one. */
export function expectedHolds(stored: UserRecord | undefined, options: ReplaceOptions): boolean {
  const { expected } = options;
  return expected === undefined || (stored !== undefined && jsonEqual(stored, expected));
}

/**
 * Whether the users a store found holding the written user's username (ignoring ASCII case; the
 * written user's own record may be among them, and is left out) are exactly
 * `options.usernameHolders`, compared as data in any order, if the option is given.
 */
export function usernameHoldersHold(
  self: string,
  found: readonly UserRecord[],
  options: ReplaceOptions,
): boolean {
  const given = options.usernameHolders;
  if (given === undefined) return true;
  const others = found.filter((user) => user.uuid !== self);
  if (others.length !== given.length) return false;
  const byUuid = new Map(given.map((user) => [user.uuid, user]));
  return (
    byUuid.size === given.length &&
    others.every((user) => {
      const seen = byUuid.get(user.uuid);
      return seen !== undefined && jsonEqual(user, seen);
    })
  );
}
