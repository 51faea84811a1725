// The quarantine steps of the stores whose writes are synchronous (MemoryUserStore, SqliteUserStore):
// write or release (apply, or keep on a conflict) and delete, each naming whom it wakes.

import { mergeUser } from "./merge-user.ts";
import {
  conflictsOf,
  freedValues,
  keptRecord,
  movedFields,
  stepPatch,
  withCleared,
} from "./pending.ts";
import type { AwaitedValue, PendingUser, QuarantineStep } from "./quarantine-store.ts";
import type { UniqueField } from "./store-rules.ts";
import { isUserConflict } from "./user-conflict-error.ts";
import type { UpsertResult, UserFieldName, UserPatch, UserRecord } from "./user-record.ts";

/** What a synchronous store gives its quarantine steps; each call is part of the caller's step. */
export interface StepStorage {
  readonly unique: readonly UniqueField[];
  /** The stored user, deactivated or not. */
  userOf(uuid: string): UserRecord | undefined;
  /** The uuid's pending record. */
  pendingOf(uuid: string): PendingUser | undefined;
  /** The store's upsert; throws a UserConflictError for a unique value another user holds. */
  upsert(patch: UserPatch): UpsertResult;
  /** The store's delete (or deactivation). */
  remove(uuid: string): { deleted: boolean };
  /** The active user other than `uuid` holding `value` of `field` (compared as stored). */
  holderOf(field: UniqueField, value: string, uuid: string): string | undefined;
  /** Clears `fields` of the stored user `before`, leaving `cleared`. */
  clear(uuid: string, fields: UserFieldName[], before: UserRecord, cleared: UserRecord): void;
  /** Writes the uuid's pending record; `existed` when it had one. */
  pend(pending: PendingUser, existed: boolean): void;
  /** Removes the uuid's pending record and what it awaits. */
  unpend(uuid: string): void;
  /**
   * For each value of `freed`, and each of `passed` that no active user holds now, the oldest
   * pending uuid awaiting it but `self`.
   */
  waiters(freed: AwaitedValue[], self: string, passed?: AwaitedValue[]): string[];
}

/**
 * One quarantine step (`writeQuarantined`, or `releaseQuarantined` without a patch): applies the
 * pending record with the patch merged last, or, on a conflict, clears the stored user's moved
 * values and keeps the record. (PostgresUserStore's step awaits each query inside its
 * transaction, so it has its own.)
 */
export function quarantineStep(
  storage: StepStorage,
  operation: "create" | "modify",
  uuid: string,
  patch: UserPatch | undefined,
): QuarantineStep {
  const { unique } = storage;
  const pending = storage.pendingOf(uuid);
  if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
  const applied = stepPatch(pending, patch);
  // The stored user, for the values this step frees (none without unique fields).
  const before = unique.length > 0 || pending !== undefined ? storage.userOf(uuid) : undefined;
  let result: UpsertResult;
  try {
    result = storage.upsert(applied);
  } catch (error) {
    if (!isUserConflict(error)) throw error;
    // What the upsert would have stored: a deactivated user starts from the patch alone.
    const merged = mergeUser(before?.deactivatedAt === undefined ? before : undefined, applied);
    const awaits = conflictsOf(unique, merged, (field, value) =>
      storage.holderOf(field, value, uuid),
    );
    const moved = movedFields(unique, before, merged);
    const cleared = withCleared(before, moved);
    if (cleared !== undefined) storage.clear(uuid, moved, before as UserRecord, cleared);
    const kept = keptRecord(pending, operation, applied, error, awaits, patch !== undefined);
    storage.pend(kept, pending !== undefined);
    const freed = freedValues(unique, before, cleared ?? before);
    return {
      outcome: "kept",
      pending: kept,
      conflict: error,
      cleared,
      wakes: storage.waiters(freed, uuid, pending?.awaits),
    };
  }
  if (pending !== undefined) storage.unpend(uuid);
  const wakes = storage.waiters(freedValues(unique, before, result.user), uuid, pending?.awaits);
  return pending === undefined
    ? { outcome: "applied", result, wakes }
    : { outcome: "released", pending, result, wakes };
}

/** `deleteQuarantined`'s step: the delete, the discard of the pending record and the wakes. */
export function quarantineDelete(storage: StepStorage, uuid: string): QuarantineStep {
  const discarded = storage.pendingOf(uuid);
  if (discarded !== undefined) storage.unpend(uuid);
  const before = storage.userOf(uuid);
  const { deleted } = storage.remove(uuid);
  const freed = freedValues(storage.unique, before, deleted ? storage.userOf(uuid) : before);
  const wakes = storage.waiters(freed, uuid, discarded?.awaits);
  return { outcome: "deleted", deleted, discarded, wakes };
}
