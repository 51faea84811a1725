// The quarantine step's rules, one home for the three bundled stores: how a kept message merges
// into a uuid's pending record, which unique values a write frees, which it conflicts on, and what
// a refused write keeps and clears. Pure: each store runs its own step inside its own transaction,
// reading and writing in its own terms, and asks these what to do with what it read.
import { composePatches } from "./compose-patches.ts";
import { mergeUser } from "./merge-user.ts";
import type { AwaitedValue, PendingUser, QuarantineStep } from "./quarantine-store.ts";
import { type UniqueField, uniqueValue } from "./store-rules.ts";
import type { UserConflictError } from "./user-conflict-error.ts";
import type { UpsertResult, UserPatch, UserRecord } from "./user-record.ts";

/** What a step read inside its transaction, and the patch it writes. */
export interface StepRead {
  operation: "create" | "modify";
  /** The step's own patch; undefined for a release. */
  patch: UserPatch | undefined;
  /** The uuid's pending record, as read. */
  pending: PendingUser | undefined;
  /**
   * The stored user, deactivated or not, as read: for the values the step frees (a store may skip
   * reading it when it has no unique field and nothing is pending).
   */
  before: UserRecord | undefined;
  /** What the step writes: the pending record's patch with the step's own merged last. */
  applied: UserPatch;
}

/** What a step whose write conflicted does, besides its outcome. */
export interface Refusal {
  /** The pending record to keep: the write merged in, awaiting every value another user holds. */
  pending: PendingUser;
  /** The unique fields to clear from the stored user: every one the record moves it off. */
  moved: UniqueField[];
  /** The stored user once they are cleared, when that changes it. */
  cleared: UserRecord | undefined;
  /** The unique values the clearing frees, whose waiters the step wakes. */
  freed: AwaitedValue[];
}

/** What a step read, with the patch it writes: the pending record's, the step's own merged last. */
export function stepRead(
  operation: "create" | "modify",
  patch: UserPatch | undefined,
  pending: PendingUser | undefined,
  before: UserRecord | undefined,
): StepRead {
  const applied =
    pending === undefined
      ? (patch as UserPatch)
      : patch === undefined
        ? pending.patch
        : composePatches([pending.patch, patch]);
  return { operation, patch, pending, before, applied };
}

/** The outcome of a step whose write applied: `released` when a pending record applied with it. */
export function written(
  pending: PendingUser | undefined,
  result: UpsertResult,
  wakes: string[],
): QuarantineStep {
  return pending === undefined
    ? { outcome: "applied", result, wakes }
    : { outcome: "released", pending, result, wakes };
}

/**
 * The unique values the step's write holds (or would have held, refused), as the unique index
 * compares them (an email in lower case). Those another active user holds, every one of them (a
 * swap over two fields conflicts on both), are what a refused write's record awaits: the store
 * looks each one up.
 */
export function wantedValues(
  unique: readonly UniqueField[],
  read: StepRead,
): (AwaitedValue & { field: UniqueField })[] {
  const user = writtenUser(read);
  const values: (AwaitedValue & { field: UniqueField })[] = [];
  for (const field of unique) {
    const raw = user[field];
    if (raw !== undefined) values.push({ field, value: uniqueValue(field, raw) });
  }
  return values;
}

/**
 * A step whose write conflicted: the record to keep (`attempts` counted, a message added when the
 * step had a patch), awaiting `awaits` (those of {@link wantedValues} another active user holds),
 * and the fields it moves the stored user off, cleared in the same step, with the values freed.
 */
export function refusal(
  unique: readonly UniqueField[],
  read: StepRead,
  conflict: UserConflictError,
  awaits: AwaitedValue[],
): Refusal {
  const { before, pending, operation, applied, patch } = read;
  // Every unique field whose stored value (of an active user) the record changes or clears, the
  // conflicting ones included, is cleared from the stored user: the directory has moved the user
  // off those values, and holding any of them could block the user who takes it next, who may be
  // the very one this record waits for (a swap where one side also changes a field that does not
  // conflict).
  const moved = freedValues(unique, before, writtenUser(read)).map(
    (freed) => freed.field as UniqueField,
  );
  const cleared = withCleared(before, moved);
  return {
    pending: keptRecord(pending, operation, applied, conflict, awaits, patch !== undefined),
    moved,
    cleared,
    freed: freedValues(unique, before, cleared ?? before),
  };
}

/**
 * What the step's write stores (or would have, refused): the stored user with the write merged
 * in, or the write alone when the stored user is deactivated (its uuid starts from the patch).
 */
function writtenUser({ before, applied }: StepRead): UserRecord {
  return mergeUser(before?.deactivatedAt === undefined ? before : undefined, applied);
}

/** The pending record after a step that conflicted. */
function keptRecord(
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

/** The stored user with `fields` cleared, or undefined when it has none of them (or is not active). */
function withCleared(
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
