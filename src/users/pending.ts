// The pending record's rules, one home for the three bundled stores: how a kept message merges
// into a uuid's pending record, which unique values a write frees, and which it conflicts on.
import { composePatches } from "./compose-patches.ts";
import type { AwaitedValue, PendingUser } from "./quarantine-store.ts";
import { type UniqueField, uniqueValue } from "./store-rules.ts";
import type { UserConflictError } from "./user-conflict-error.ts";
import type { UserPatch, UserRecord } from "./user-record.ts";

/** The patch a step applies: the pending record's, with the step's own patch merged last. */
export function stepPatch(
  pending: PendingUser | undefined,
  patch: UserPatch | undefined,
): UserPatch {
  if (pending === undefined) return patch as UserPatch;
  return patch === undefined ? pending.patch : composePatches([pending.patch, patch]);
}

/** The pending record after a step that conflicted. */
export function keptRecord(
  previous: PendingUser | undefined,
  operation: "create" | "modify",
  patch: UserPatch,
  conflict: UserConflictError,
  awaits: AwaitedValue[],
  addsMessage: boolean,
): PendingUser {
  const fields = [...new Set(awaits.map((awaited) => awaited.field))];
  if (fields.length === 0 && conflict.field !== undefined) fields.push(conflict.field);
  return {
    uuid: patch.uuid,
    operation: previous?.operation ?? operation,
    patch,
    reason: conflict.message,
    fields,
    awaits,
    since: previous?.since ?? new Date().toISOString(),
    attempts: (previous?.attempts ?? 0) + 1,
    messages: (previous?.messages ?? 0) + (addsMessage ? 1 : 0),
  };
}

/** The unique values `before` (when active) held that `after` (when active) no longer holds. */
export function freedValues(
  unique: readonly UniqueField[],
  before: UserRecord | undefined,
  after: UserRecord | undefined,
): AwaitedValue[] {
  if (before === undefined || before.deactivatedAt !== undefined) return [];
  const freed: AwaitedValue[] = [];
  for (const field of unique) {
    const old = before[field];
    if (old === undefined) continue;
    const now = after === undefined || after.deactivatedAt !== undefined ? undefined : after[field];
    const value = uniqueValue(field, old);
    if (now === undefined || uniqueValue(field, now) !== value) freed.push({ field, value });
  }
  return freed;
}

/**
 * The unique fields a kept record moves its user off: every one whose stored value (of an active
 * user) it changes or clears, the conflicting ones included. A kept message clears them all from
 * the stored user: the directory has moved the user off those values, and holding any of them
 * could block the user who takes it next, who may be the very one this record waits for (a swap
 * where one side also changes a field that does not conflict).
 */
export function movedFields(
  unique: readonly UniqueField[],
  before: UserRecord | undefined,
  merged: UserRecord,
): UniqueField[] {
  return freedValues(unique, before, merged).map((freed) => freed.field as UniqueField);
}

/**
 * The unique values of `user` that another active user holds, every one of them (a swap over two
 * fields conflicts on both), as `holderOf` answers for each.
 */
export function conflictsOf(
  unique: readonly UniqueField[],
  user: UserRecord,
  holderOf: (field: UniqueField, value: string) => string | undefined,
): AwaitedValue[] {
  const conflicts: AwaitedValue[] = [];
  for (const field of unique) {
    const raw = user[field];
    if (raw === undefined) continue;
    const value = uniqueValue(field, raw);
    const holder = holderOf(field, value);
    if (holder !== undefined && holder !== user.uuid) conflicts.push({ field, value });
  }
  return conflicts;
}

/** The stored user with `fields` cleared, or undefined when it has none of them (or is not active). */
export function withCleared(
  user: UserRecord | undefined,
  fields: readonly string[],
): UserRecord | undefined {
  if (user === undefined || user.deactivatedAt !== undefined) return undefined;
  if (!fields.some((field) => (user as unknown as Record<string, unknown>)[field] !== undefined)) {
    return undefined;
  }
  const cleared = { ...user } as unknown as Record<string, unknown>;
  for (const field of fields) delete cleared[field];
  return cleared as unknown as UserRecord;
}

/**
 * A pending record's columns as the SQL stores write them, the uuid last: operation, patch,
 * reason, fields and awaits (JSON text), since, attempts, messages, uuid.
 */
export function pendingColumns(pending: PendingUser): (string | number)[] {
  return [
    pending.operation,
    JSON.stringify(pending.patch),
    pending.reason,
    JSON.stringify(pending.fields),
    JSON.stringify(pending.awaits),
    pending.since,
    pending.attempts,
    pending.messages,
    pending.uuid,
  ];
}
