// The quarantine's part of the store contract: what a store keeps for a message it refused with a
// UserConflictError, and how it gives it back. The store keeps it, not the handler, so that it
// survives a restart and replicas share it, and so that applying a kept message and removing it
// are one atomic step in the database.

import type { UserConflictError } from "./user-conflict-error.ts";
import type { UpsertResult, UserFieldName, UserPatch } from "./user-record.ts";

/** A message to keep, as the handler hands it to {@link QuarantineMethods.keepQuarantined}. */
export interface QuarantineEntry {
  uuid: string;
  /** The operation the platform sent. */
  operation: "create" | "modify";
  /**
   * The patch as it would have been stored (after the handler's `transform`), password included:
   * it must be applied later as it was sent, so the store keeps it as it keeps users.
   */
  patch: UserPatch;
  /** Why it is kept: the conflict's message, or that an earlier message of the uuid is kept. */
  reason: string;
  /** The conflicting field, when known. */
  field?: UserFieldName | undefined;
}

/** A message kept in the quarantine, as the store lists it. */
export interface QuarantinedEntry extends QuarantineEntry {
  /** The store's identifier of the message; kept messages of one uuid apply in its order. */
  id: string;
  /** When it was kept (ISO 8601). */
  since: string;
  /** How many times applying it was tried, the first included. */
  attempts: number;
}

/** What {@link QuarantineMethods.releaseQuarantined} did with the oldest kept message of a uuid. */
export type ReleaseOutcome =
  /**
   * They applied: the user was written with every kept message of the uuid, composed in order
   * (`composePatches`), and they left the quarantine, in one step.
   */
  | { outcome: "released"; entries: QuarantinedEntry[]; result: UpsertResult }
  /** They still conflict: they stay, the oldest's attempts counted and its reason updated. */
  | { outcome: "kept"; entry: QuarantinedEntry; conflict: UserConflictError }
  /** Nothing is kept for the uuid, or another replica is releasing it right now. */
  | { outcome: "none" };

/**
 * The methods a store implements to support the handler's `quarantine` option; the bundled stores
 * do. `testUserStore` checks them. Each must be atomic in the store itself, since several replicas
 * of the application share it.
 */
export interface QuarantineMethods {
  /**
   * Keeps a message durably, behind the messages already kept for its uuid; resolves it as kept.
   * When `field` is set (the value the message brings for it is held by another user), it also
   * clears that field of the stored user, in the same step: the directory has moved the user off
   * its old value, and holding it would block the user who takes it next, which is how a swap of
   * two users' values resolves. `releaseQuarantined` does the same when a message conflicts again.
   */
  keepQuarantined(entry: QuarantineEntry): Promise<QuarantinedEntry>;
  /**
   * The kept messages, oldest first (of one uuid with `{ uuid }`), password included: the handler
   * strips it before anything leaves it.
   */
  listQuarantined(options?: { uuid?: string | undefined }): Promise<QuarantinedEntry[]>;
  /**
   * Applies every kept message of `uuid`, composed in order with `composePatches`, as `upsert`
   * would, and removes them, as one atomic step that no two replicas take at once; or, when the
   * result conflicts again (a {@link UserConflictError}), counts an attempt on the oldest, sets
   * its reason and field, clears that field of the stored user as `keepQuarantined` does, and
   * keeps them all. Any other error rejects, keeping them. Composing rather than applying one at
   * a time lets a later message replace a value an earlier one waited for.
   */
  releaseQuarantined(uuid: string): Promise<ReleaseOutcome>;
  /** Removes every kept message of `uuid` (its delete came); resolves how many there were. */
  discardQuarantined(uuid: string): Promise<number>;
}
