// The UserStore contract's interface: the writes every store has, the optional lifecycle and
// quarantine methods, and the reads (UserStoreReads).
import type { QuarantineMethods } from "./quarantine-store.ts";
import type { UpsertResult, UserFieldName, UserPatch, UserRecord } from "./user-record.ts";

/**
 * Where the Provisioning API keeps users. Implement it over any database.
 *
 * Several replicas of an application may receive the platform's calls, so each method must be
 * atomic in the store itself (one SQL statement or a transaction), not only within one process.
 * Check an implementation with `testUserStore` from `platform-integration/testing`.
 *
 * A store that refuses a record for good (a unique value held by another user) throws
 * {@link UserConflictError}; the quarantine methods let the handler's `quarantine` option keep
 * such messages in the store instead of pausing the directory.
 */
export interface UserStore extends Partial<QuarantineMethods> {
  /** Atomically merges `patch` into the user with its uuid, creating the user when missing. */
  upsert(patch: UserPatch): Promise<UpsertResult>;
  /** Removes the user; resolves (with `deleted: false`) when there was none. */
  delete(uuid: string): Promise<{ deleted: boolean }>;
  /** Whether the store can take writes now; ping answers 503 while it is false. */
  ready?(): boolean | Promise<boolean>;
  /**
   * Removes every user, before the platform's full re-sync (`POST /v1/reset`). The handler calls
   * it only when the application opts in with its `reset` option.
   */
  reset?(): Promise<void>;
  /**
   * Atomically writes `user` whole, creating it when missing: each documented field and `extra`
   * as given (one the record omits is cleared), and `deactivatedAt` as given. With it set, the
   * user is deactivated and keeps its record: `get` returns it, `list` and `count` leave it out
   * unless asked, and it holds no unique value; without it, the user is active. A unique value
   * held by another active user throws {@link UserConflictError} and stores nothing. Resolves the
   * stored user. For a second protocol over the same store, whose writes carry whole records and
   * whose deactivation is not a deletion (SCIM's `active: false`); the bundled stores implement it.
   *
   * With options the write is conditional, checked in the same atomic step as the write (one
   * transaction, or one lock of the store's), and it resolves `undefined`, storing nothing, when a
   * condition fails; the caller reads again and decides afresh:
   * - `expected` (optimistic concurrency across replicas): the stored user is still `expected`,
   *   compared as data; so no acknowledged change of another replica is written over.
   * - `usernameHolders` (a username unique by the caller's own rule, across replicas): the other
   *   users whose username equals `user.username` ignoring ASCII case are still exactly these.
   */
  replace?(user: UserRecord): Promise<UserRecord>;
  replace?(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
}

/**
 * Options of {@link UserStore.replace}: the conditions of a conditional write. Each one given must
 * hold, else the write stores nothing and resolves undefined.
 */
export interface ReplaceOptions {
  /**
   * The user as `get` returned it: the write happens only if the stored user is still this one
   * (its documented fields, `extra` and `deactivatedAt` equal as data), else it resolves undefined.
   */
  expected?: UserRecord | undefined;
  /**
   * The other users (not `user.uuid`; deactivated ones too) whose `username` equals
   * `user.username` ignoring the case of ASCII letters (A-Z), as the caller read them
   * (`findUsers({ field: "username", value, ignoreCase: true })`): the write happens only if those
   * are still exactly these users, each equal as data as `expected` is, else it resolves
   * undefined. `[]`: only if no other user holds the username. Reading the holders and writing
   * must be one atomic step across every connection (a write transaction in SQLite; in
   * PostgreSQL, a transaction under an advisory lock of the lowercased username, which every
   * such write takes). Only writes given this option take part: an upsert is never held back.
   *
   * The SCIM server gives it when a user gets a new userName (a create, a rename), so that its
   * userName stays unique ignoring case among its users, inactive ones too, whatever the replica:
   * a rule the store's `unique` option cannot say (its index compares exactly and leaves
   * deactivated users out). `testUserStore` checks it, with concurrent callers.
   */
  usernameHolders?: readonly UserRecord[] | undefined;
}

/**
 * A look-up of {@link UserStoreReads.findUsers}: the users whose documented `field`, or whose
 * `extra` value at the two-key path `extra` (`["scim", "externalId"]` is
 * `extra.scim.externalId`), equals `value`; with `ignoreCase`, ignoring the case of ASCII letters
 * (A-Z) only, as the unique `email` does.
 */
export type UserLookup =
  | { field: UserFieldName; value: string; ignoreCase?: boolean | undefined }
  | { extra: readonly [string, string]; value: string; ignoreCase?: boolean | undefined };

/** Which users {@link UserStoreReads.list} and {@link UserStoreReads.count} take in. */
export interface UserReadOptions {
  /** Deactivated users too (a store with `onDelete: "deactivate"`). Default false. */
  includeDeactivated?: boolean | undefined;
}

/** A user whose `extra` at a two-key path holds exactly `value` (compared as JSON data). */
export interface UserExtraMatch {
  /** The two keys: `["scim", "active"]` is `extra.scim.active`. */
  extra: readonly [string, string];
  value: string | boolean;
}

/** Which page of which users {@link UserStoreReads.listPage} reads. */
export interface UserPageOptions {
  /** How many users of the order to pass over first. Default 0. */
  offset?: number | undefined;
  /** The most users the page holds (0 for none: the total alone). */
  limit: number;
  /**
   * Deactivated users too: every one (`true`), none (`false`, the default), or only those that
   * also match a {@link UserExtraMatch} (SCIM lists the users its `active: false` deactivated,
   * `{ extra: ["scim", "active"], value: false }`, and not the ones deleted and kept).
   */
  includeDeactivated?: boolean | UserExtraMatch | undefined;
}

/** A page of {@link UserStoreReads.listPage}. */
export interface UserPage {
  /** The page's users, in `list`'s order. */
  users: UserRecord[];
  /** How many users the options take in, on every page: the page and the rest. */
  total: number;
}

/**
 * The reads of every bundled store (`MemoryUserStore`, `SqliteUserStore`, `PostgresUserStore`),
 * one shape whatever the database: each returns a promise, so swapping stores changes no call
 * site. Await them: `res.json(await store.list())`. The handler needs none of them; they are for
 * the application's own pages and checks. A returned record is the caller's to change.
 */
export interface UserStoreReads {
  /** The stored user with this uuid (a deactivated one too), or undefined. */
  get(uuid: string): Promise<UserRecord | undefined>;
  /**
   * Every stored user, deactivated ones only when asked. The order is the store's: creation order
   * in MemoryUserStore and SqliteUserStore, by uuid in PostgresUserStore.
   */
  list(options?: UserReadOptions): Promise<UserRecord[]>;
  /** How many users `list` would return with the same options. */
  count(options?: UserReadOptions): Promise<number>;
  /**
   * The users (deactivated ones too) that a {@link UserLookup} finds, in `list`'s order, without
   * reading every user into the application: the SCIM server finds a user by `userName` and
   * `externalId` with it. Optional; the bundled stores implement it.
   */
  findUsers?(lookup: UserLookup): Promise<UserRecord[]>;
  /**
   * One page of the users `list` would return (in its order, which is stable), and their total,
   * read together, without reading every user into the application: the SCIM server pages
   * `GET /Users` with it. The SQL stores ask the database for the page and the count in one
   * statement. Optional; the bundled stores implement it.
   */
  listPage?(options: UserPageOptions): Promise<UserPage>;
}
