// What the handler's quarantine shows and takes: a kept user as it may leave the handler, the
// events of its hook, its figures, the changes and failures it reports, and its options.
import type { Logger } from "../internal/logger.ts";
import type { KeyedLock } from "./keyed-lock.ts";
import type { AwaitedValue, QuarantineStep } from "./quarantine-store.ts";
import type { UserFieldName, UserPatch, UserRecord } from "./user-record.ts";
import type { UserStore } from "./user-store.ts";

/** A user the quarantine holds, as the handler shows it: everything but the password. */
export interface QuarantinedUser {
  uuid: string;
  /** The operation of its first kept message (`create`: the user is not created yet). */
  operation: "create" | "modify";
  /** Every kept message of the user merged in order, without `password`. */
  user: Omit<UserPatch, "password">;
  /** Why it waits: the store's conflict. */
  reason: string;
  /** The unique fields whose values other users hold. */
  fields: UserFieldName[];
  /** The values it waits for (an email in lower case); empty when the store cannot name them. */
  awaits: AwaitedValue[];
  /** When its first message was kept (ISO 8601). */
  since: string;
  /** How many times applying it was tried. */
  attempts: number;
  /** How many messages it merges. */
  messages: number;
}

/** What the `onQuarantine` hook sees. */
export interface QuarantineEvent {
  /**
   * `kept`: a message entered the quarantine (answered with success), merged into the user's
   * pending record; `released`: the pending record applied and left it; `discarded`: the user's
   * delete removed it unapplied.
   */
  type: "kept" | "released" | "discarded";
  pending: QuarantinedUser;
}

/** What `handler.retryQuarantined()` did. */
export interface QuarantineRetry {
  /** Users whose pending record applied. */
  released: number;
  /** Users still waiting. */
  kept: number;
}

/** The quarantine's figures in `handler.stats()`, counted by this handler since it started. */
export interface QuarantineStats {
  /** Messages this handler put in the quarantine. */
  kept: number;
  /** Pending users this handler applied. */
  released: number;
  /** Pending users this handler discarded on a delete. */
  discarded: number;
  /** Users waiting, as this handler last read them (all replicas'). */
  waiting: number;
}

/** The quarantine as the operations use it. */
export interface Quarantine {
  /** Writes a patch through the store's step: applied, released with the pending record, or kept. */
  /** `log`, where given, is the request's own logger (Fastify's `request.log`). */
  write(operation: "create" | "modify", patch: UserPatch, log?: Logger): Promise<QuarantineStep>;
  /** Deletes a user and discards its pending record, in one step. */
  remove(uuid: string): Promise<QuarantineStep>;
  /**
   * Ends the caller's turn on `uuid`: first runs a release that was asked for while the turn was
   * held (by a hook's `retryQuarantined()`, or a step that freed a value), then frees the turn.
   * Resolves the uuids that release woke.
   */
  finish(uuid: string): Promise<string[]>;
  /**
   * Releases the woken users, each in its own turn, and those they wake, and first a few users
   * whose release failed before (due); never rejects. Undefined when there is nothing to try.
   */
  settle(wakes: readonly string[]): Promise<void> | undefined;
  retry(): Promise<QuarantineRetry>;
  list(): Promise<QuarantinedUser[]>;
  stats(): QuarantineStats;
}

/**
 * A change the quarantine stored on its own (a release, the clearing of a kept user's values),
 * for the protocol's change hook: the Provisioning API's `onChange` takes it as it is.
 */
export interface QuarantineChange {
  type: "created" | "updated";
  uuid: string;
  user: UserRecord;
}

/** What a failure the quarantine reports concerns: the operation and user, and its status. */
export interface QuarantineFailure {
  operation: "create" | "modify";
  uuid: string;
  /** 503 when the store failed (retriable), 500 when a hook did. */
  status: 500 | 503;
}

export interface QuarantineOptions {
  store: UserStore;
  lanes: KeyedLock;
  logger: Logger;
  onChange: ((change: QuarantineChange) => void | Promise<void>) | undefined;
  onQuarantine: ((event: QuarantineEvent) => void | Promise<void>) | undefined;
  /** Reports a failure that changes no answer (a hook's, a background retry's). */
  report(error: unknown, context: QuarantineFailure, patch?: UserPatch): void;
}
