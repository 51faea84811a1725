import type { JsonValue } from "type-fest";
import { type UserPatch, userFieldNames } from "./user-record.ts";

/**
 * One patch that merges as `patches` merged one after the other: a later field replaces an
 * earlier one (`null` included, which clears), and `extra` composes key by key the same way.
 * The quarantine applies a user's kept messages with it, all at once, so that an earlier message
 * whose value was taken meanwhile cannot block a later one that replaces that value.
 */
export function composePatches(patches: readonly UserPatch[]): UserPatch {
  const first = patches[0];
  if (first === undefined) throw new TypeError("composePatches needs at least one patch");
  const composed: UserPatch = { uuid: first.uuid };
  let extra: [string, JsonValue | null][] | undefined;
  for (const patch of patches) {
    for (const name of userFieldNames) {
      if (name in patch) composed[name] = patch[name] ?? null;
    }
    if (patch.extra !== undefined) {
      const keys = new Set(Object.keys(patch.extra));
      extra = [...(extra ?? []).filter(([key]) => !keys.has(key)), ...Object.entries(patch.extra)];
    }
  }
  // Object.fromEntries keeps a `__proto__` key as a plain own key.
  if (extra !== undefined) composed.extra = Object.fromEntries(extra);
  return composed;
}
