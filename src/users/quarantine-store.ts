// The quarantine's part of the store contract. The store keeps, per uuid, one pending record: what
// the application still owes the directory for that user (every kept message merged in order).
// The store keeps it, not the handler, so that it survives a restart and replicas share it; and
// every change of a uuid with the quarantine on is one atomic store step, under a per-uuid lock
// every replica takes, so that no two replicas interleave a keep, a release or a delete.

import type { UserConflictError } from "./user-conflict-error.ts";
import type { UpsertResult, UserFieldName, UserPatch, UserRecord } from "./user-record.ts";

/** A unique value a pending user waits for: held by another active user when it was kept. */
export interface AwaitedValue {
  field: UserFieldName;
  /** The value as the unique index compares it (an email in lower case). */
  value: string;
}

/** What the store keeps for one uuid whose messages it could not apply yet. */
export interface PendingUser {
  uuid: string;
  /** The operation of the first message kept: `create` when the user was created by it. */
  operation: "create" | "modify";
  /**
   * Every kept message of the uuid merged in order (`composePatches`), password included: it
   * applies as one upsert, as the messages would have, so the store keeps it as it keeps users.
   */
  patch: UserPatch;
  /** Why it waits: the conflict's message. */
  reason: string;
  /** Every unique field whose value another user holds, as last tried. */
  fields: UserFieldName[];
  /**
   * The values it waits for (one per field of `fields` the store can name): a step that frees one
   * of them answers this uuid in its `wakes`. Empty for a conflict the store cannot tie to a value
   * (a foreign key): then only the uuid's next message or `retryQuarantined()` tries it again.
   */
  awaits: AwaitedValue[];
  /** When its first message was kept (ISO 8601). */
  since: string;
  /** How many times applying it was tried, the first included. */
  attempts: number;
  /** How many messages it merges. */
  messages: number;
}

/**
 * What one quarantine step did. Every outcome lists `wakes`: for each unique value this step
 * freed, and each value the uuid's pending record awaited that no active user holds after the
 * step (it was woken for it and did not take it: it passes it on), the oldest pending user
 * waiting for it (never the step's own uuid, unless a race freed its own awaited value while it
 * was being kept). The handler releases them, each in its own step. One per value: the first
 * that takes it holds it again, and the others keep waiting. (Waking every waiter is correct
 * too, only costlier.)
 */
export type QuarantineStep =
  /** The patch applied at once; nothing was pending for the uuid. */
  | { outcome: "applied"; result: UpsertResult; wakes: string[] }
  /** The pending record (with the step's patch merged last, if any) applied and left. */
  | { outcome: "released"; pending: PendingUser; result: UpsertResult; wakes: string[] }
  /**
   * It conflicts: `pending` is kept (the step's patch merged in), awaiting every conflicting
   * value. Every unique field the record moves the user off (the conflicting ones and any other
   * it changes or clears) was cleared from the stored user in the same step: the directory moved
   * it off those values, and holding them would block whoever takes them next, that is how swaps
   * resolve. `cleared` is the stored user after that, when it changed.
   */
  | {
      outcome: "kept";
      pending: PendingUser;
      conflict: UserConflictError;
      cleared: UserRecord | undefined;
      wakes: string[];
    }
  /** A delete: the user was deleted (or deactivated) and its pending record, if any, discarded. */
  | { outcome: "deleted"; deleted: boolean; discarded: PendingUser | undefined; wakes: string[] }
  /** A release with nothing pending for the uuid. */
  | { outcome: "none"; wakes: string[] };

/**
 * The methods a store implements to support the handler's `quarantine` option; the bundled stores
 * do, and `testUserStore` checks them, with concurrent callers. With the option on, the handler
 * writes through these instead of `upsert` and `delete`.
 *
 * The one contract: each call is ONE atomic step on one uuid, under a lock on that uuid that
 * every replica sharing the store takes and that is held until the step is durable (SQLite: one
 * write transaction; PostgreSQL: a transaction holding an advisory lock on the uuid). Within it
 * the step reads the uuid's pending record, writes the user, writes or removes the pending record
 * (removing exactly the record it read), and finds the uuids it `wakes`. A step that fails
 * (anything but a conflict) changes nothing and rejects.
 */
export interface QuarantineMethods {
  /**
   * Writes `patch` as `upsert` would, through the quarantine: merged after the uuid's pending
   * record when there is one (`released` when the merge applies), `applied` when nothing was
   * pending and it applies, `kept` when it conflicts (a {@link UserConflictError}): the pending
   * record then holds the merge, with `attempts` counted and the fields it moves off cleared.
   */
  writeQuarantined(operation: "create" | "modify", patch: UserPatch): Promise<QuarantineStep>;
  /** Tries the uuid's pending record again: `released`, `kept` as above, or `none`. */
  releaseQuarantined(uuid: string): Promise<QuarantineStep>;
  /** Deletes the user as `delete` would and discards its pending record, in one step. */
  deleteQuarantined(uuid: string): Promise<QuarantineStep>;
  /**
   * The pending records, oldest first (only the uuid's with `{ uuid }`), password included: the
   * handler strips it before anything leaves it.
   */
  listQuarantined(options?: { uuid?: string | undefined }): Promise<PendingUser[]>;
}
