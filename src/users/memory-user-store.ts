// MemoryUserStore: the UserStore in Maps, with the store rules, the reads and the quarantine's
// pending records, their index of awaited values and its steps (quarantine-step.ts decides).

import { jsonCopy } from "../internal/json-copy.ts";
import { mergeUser } from "./merge-user.ts";
import { freedValues, refusal, stepRead, wantedValues, written } from "./quarantine-step.ts";
import type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "./quarantine-store.ts";
import { expectedHolds, usernameHoldersHold } from "./replace-conditions.ts";
import {
  asciiLowerCase,
  awaitedRead,
  type OnDelete,
  type StoreRulesOptions,
  storeRules,
  type UniqueField,
  uniqueConflict,
  uniqueValue,
} from "./store-rules.ts";
import type { UpsertResult, UserPatch, UserRecord } from "./user-record.ts";
import type {
  ReplaceOptions,
  UserExtraMatch,
  UserLookup,
  UserPage,
  UserPageOptions,
  UserReadOptions,
  UserStore,
  UserStoreReads,
} from "./user-store.ts";

/** Options of {@link MemoryUserStore}: unique fields and what a delete does. */
export type MemoryUserStoreOptions = StoreRulesOptions;

/**
 * A {@link UserStore} in a Map: for tests, demos and single-process prototypes. Users, and the
 * messages kept in its quarantine, are lost when the process ends.
 *
 * @example
 * ```ts
 * const store = new MemoryUserStore({ unique: ["username", "email"], onDelete: "deactivate" });
 * ```
 */
export class MemoryUserStore implements UserStore, UserStoreReads, QuarantineMethods {
  readonly #users = new UserMap();
  readonly #unique: UniqueField[];
  readonly #onDelete: OnDelete;
  /** For each unique field, the active user holding each value. */
  readonly #holders = new Map<UniqueField, Map<string, string>>();
  /** The pending record of each uuid the quarantine holds, oldest first. */
  readonly #pending = new Map<string, PendingUser>();
  /** For each awaited (field, value), the pending uuids that wait for it. */
  readonly #awaiting = new Map<string, Set<string>>();

  constructor(options: MemoryUserStoreOptions = {}) {
    const rules = storeRules("MemoryUserStore", options);
    this.#unique = rules.unique;
    this.#onDelete = rules.onDelete;
    for (const field of this.#unique) this.#holders.set(field, new Map());
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    return this.#upsert(patch);
  }

  #upsert(patch: UserPatch): UpsertResult {
    const stored = this.#users.get(patch.uuid);
    // A deactivated user is one the directory deleted: a write of its uuid creates the user the
    // directory sends now, from the patch alone, and nothing of the old record comes back.
    const existing = stored?.deactivatedAt === undefined ? stored : undefined;
    const user = mergeUser(existing, patch);
    this.#hold(user, existing);
    this.#users.set(patch.uuid, user);
    return { created: existing === undefined, user: copy(user) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    return this.#delete(uuid);
  }

  #delete(uuid: string): { deleted: boolean } {
    const existing = this.#users.get(uuid);
    if (existing === undefined) return { deleted: false };
    if (existing.deactivatedAt !== undefined) {
      // A user deactivated by `replace` (not deleted) is removed as the SQL stores remove it.
      if (this.#onDelete === "deactivate") return { deleted: false };
      this.#users.delete(uuid);
      return { deleted: true };
    }
    this.#release(existing);
    if (this.#onDelete === "delete") this.#users.delete(uuid);
    else this.#users.set(uuid, { ...existing, deactivatedAt: new Date().toISOString() });
    return { deleted: true };
  }

  /**
   * Writes `user` whole, as {@link UserStore.replace} says; deactivated, it holds no value. With
   * options, only if their conditions hold (else resolves undefined), checked synchronously with
   * the write, so nothing interleaves in this process.
   */
  async replace(user: UserRecord): Promise<UserRecord>;
  async replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
  async replace(user: UserRecord, options?: ReplaceOptions): Promise<UserRecord | undefined> {
    const stored = this.#users.get(user.uuid);
    if (
      options !== undefined &&
      (!expectedHolds(stored, options) ||
        !usernameHoldersHold(
          user.uuid,
          user.username === undefined ? [] : this.#users.withUsername(user.username),
          options,
        ))
    ) {
      return undefined;
    }
    const record = mergeUser(undefined, user as UserPatch);
    if (user.deactivatedAt !== undefined) record.deactivatedAt = user.deactivatedAt;
    if (record.deactivatedAt === undefined) this.#hold(record, stored);
    else if (stored !== undefined && stored.deactivatedAt === undefined) this.#release(stored);
    this.#users.set(user.uuid, record);
    return copy(record);
  }

  /**
   * The users a look-up finds, deactivated ones too, as copies, in insertion order; a username
   * from an index (the SCIM server's check on every create), anything else by reading every user.
   */
  findUsers(lookup: UserLookup): Promise<UserRecord[]> {
    return awaitedRead("store.findUsers()", () => {
      const wanted = lookup.ignoreCase ? asciiLowerCase(lookup.value) : lookup.value;
      const candidates =
        "field" in lookup && lookup.field === "username"
          ? this.#users.withUsername(lookup.value)
          : [...this.#users.values()];
      return candidates
        .filter((user) => {
          const value = "field" in lookup ? user[lookup.field] : extraValue(user, lookup.extra);
          if (typeof value !== "string") return false;
          return (lookup.ignoreCase ? asciiLowerCase(value) : value) === wanted;
        })
        .map(copy);
    });
  }

  /** A page of the users in insertion order, and their total: one pass, copies of the page only. */
  listPage({ offset = 0, limit, includeDeactivated = false }: UserPageOptions): Promise<UserPage> {
    return awaitedRead("store.listPage()", () => {
      const users: UserRecord[] = [];
      let total = 0;
      for (const user of this.#users.values()) {
        if (user.deactivatedAt !== undefined && !takesDeactivated(includeDeactivated, user)) {
          continue;
        }
        if (total >= offset && users.length < limit) users.push(copy(user));
        total++;
      }
      return { users, total };
    });
  }

  /** Removes every user and every kept message: the re-sync that follows supersedes them. */
  async reset(): Promise<void> {
    this.#users.clear();
    this.#pending.clear();
    this.#awaiting.clear();
    for (const holders of this.#holders.values()) holders.clear();
  }

  /** The stored user with this uuid (deactivated ones too), as a copy, or undefined. */
  get(uuid: string): Promise<UserRecord | undefined> {
    return awaitedRead("store.get(uuid)", () => {
      const user = this.#users.get(uuid);
      return user && copy(user);
    });
  }

  /** Every stored user, as copies, in insertion order; deactivated ones only when asked. */
  list(options: UserReadOptions = {}): Promise<UserRecord[]> {
    return awaitedRead("store.list()", () => this.#list(options).map(copy));
  }

  /** How many users {@link list} would return with the same options. */
  count(options: UserReadOptions = {}): Promise<number> {
    return awaitedRead("store.count()", () => this.#list(options).length);
  }

  #list({ includeDeactivated = false }: UserReadOptions): UserRecord[] {
    return [...this.#users.values()].filter(
      (user) => includeDeactivated || user.deactivatedAt === undefined,
    );
  }

  async writeQuarantined(
    operation: "create" | "modify",
    patch: UserPatch,
  ): Promise<QuarantineStep> {
    return detached(this.#step(operation, patch.uuid, patch));
  }

  async releaseQuarantined(uuid: string): Promise<QuarantineStep> {
    return detached(this.#step("modify", uuid, undefined));
  }

  /** The delete, the discard of the pending record and the wakes, in one synchronous step. */
  async deleteQuarantined(uuid: string): Promise<QuarantineStep> {
    const discarded = this.#unpend(uuid);
    const before = this.#users.get(uuid);
    const { deleted } = this.#delete(uuid);
    const wakes = this.#waiters(
      freedValues(this.#unique, before, this.#users.get(uuid)),
      uuid,
      discarded?.awaits,
    );
    return detached({ outcome: "deleted", deleted, discarded, wakes });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    return [...this.#pending.values()]
      .filter((pending) => uuid === undefined || pending.uuid === uuid)
      .map((pending) => jsonCopy(pending));
  }

  /**
   * One quarantine step, synchronous so that nothing interleaves with it in this process
   * (quarantine-step.ts decides what it keeps, clears and wakes): applies the pending record with
   * the patch merged last, or, on a conflict, clears the stored user's moved values and keeps the
   * record.
   */
  #step(
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): QuarantineStep {
    const pending = this.#pending.get(uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    const before = this.#users.get(uuid);
    const read = stepRead(operation, patch, pending, before);
    // The holders are this store's unique index: the values another user holds decide, before
    // anything is written, as the upsert's own check would (the first of them is its conflict).
    const awaits = wantedValues(this.#unique, read).filter(({ field, value }) => {
      const holder = this.#holders.get(field)?.get(value);
      return holder !== undefined && holder !== uuid;
    });
    const [held] = awaits;
    if (held === undefined) {
      const result = this.#upsert(read.applied);
      this.#unpend(uuid);
      const freed = freedValues(this.#unique, before, result.user);
      return written(pending, result, this.#waiters(freed, uuid, pending?.awaits));
    }
    const conflict = uniqueConflict(held.field);
    const { pending: kept, cleared, freed } = refusal(this.#unique, read, conflict, awaits);
    if (cleared !== undefined) {
      this.#release(before as UserRecord);
      this.#users.set(uuid, cleared);
      this.#hold(cleared, undefined);
    }
    this.#pend(kept);
    const wakes = this.#waiters(freed, uuid, pending?.awaits);
    return { outcome: "kept", pending: kept, conflict, cleared, wakes };
  }

  /**
   * Writes the pending record of its uuid. A record kept again keeps its place (Map.set on a key
   * it has), and so does its place among the waiters of each value it still awaits: oldest first
   * is the order of first keeping, as in the SQL stores.
   */
  #pend(pending: PendingUser): void {
    const previous = this.#pending.get(pending.uuid);
    if (previous !== undefined) {
      const still = new Set(pending.awaits.map(({ field, value }) => awaitKey(field, value)));
      for (const { field, value } of previous.awaits) {
        const key = awaitKey(field, value);
        if (still.has(key)) continue;
        const waiting = this.#awaiting.get(key);
        waiting?.delete(pending.uuid);
        if (waiting?.size === 0) this.#awaiting.delete(key);
      }
    }
    this.#pending.set(pending.uuid, pending);
    for (const { field, value } of pending.awaits) {
      const key = awaitKey(field, value);
      const waiting = this.#awaiting.get(key);
      if (waiting === undefined) this.#awaiting.set(key, new Set([pending.uuid]));
      else waiting.add(pending.uuid);
    }
  }

  /** Removes the pending record of `uuid` and its place in the index; resolves it. */
  #unpend(uuid: string): PendingUser | undefined {
    const pending = this.#pending.get(uuid);
    if (pending === undefined) return undefined;
    this.#pending.delete(uuid);
    for (const { field, value } of pending.awaits) {
      const key = awaitKey(field, value);
      const waiting = this.#awaiting.get(key);
      waiting?.delete(uuid);
      if (waiting?.size === 0) this.#awaiting.delete(key);
    }
    return pending;
  }

  /**
   * For each value of `freed`, and each of `passed` (what the step's uuid awaited) that nobody
   * holds now, the oldest pending uuid waiting for it but `self`: one per value, since the first
   * that takes it holds it again. One that does not take it passes it on in its own step.
   */
  #waiters(freed: AwaitedValue[], self: string, passed: AwaitedValue[] = []): string[] {
    const wakes = new Set<string>();
    const free = passed.filter(({ field, value }) => {
      const holders = this.#holders.get(field as UniqueField);
      return holders !== undefined && !holders.has(value);
    });
    for (const { field, value } of [...freed, ...free]) {
      for (const uuid of this.#awaiting.get(awaitKey(field, value)) ?? []) {
        if (uuid === self) continue;
        wakes.add(uuid);
        break;
      }
    }
    return [...wakes];
  }

  /** Takes the unique values of `user` from those of `existing`, or throws, changing nothing. */
  #hold(user: UserRecord, existing: UserRecord | undefined): void {
    if (this.#unique.length === 0) return;
    for (const field of this.#unique) {
      const value = user[field];
      const holder = value === undefined ? undefined : this.#holderOf(field, value);
      if (holder !== undefined && holder !== user.uuid) throw uniqueConflict(field);
    }
    if (existing !== undefined && existing.deactivatedAt === undefined) this.#release(existing);
    for (const field of this.#unique) {
      const value = user[field];
      if (value !== undefined) this.#holders.get(field)?.set(uniqueValue(field, value), user.uuid);
    }
  }

  #holderOf(field: UniqueField, value: string): string | undefined {
    return this.#holders.get(field)?.get(uniqueValue(field, value));
  }

  /** Frees the unique values an active user holds. */
  #release(user: UserRecord): void {
    for (const field of this.#unique) {
      const value = user[field];
      if (value !== undefined && this.#holderOf(field, value) === user.uuid) {
        this.#holders.get(field)?.delete(uniqueValue(field, value));
      }
    }
  }
}

/** The value at a two-key path of a user's `extra`. */
function extraValue(user: UserRecord, [outer, inner]: readonly [string, string]): unknown {
  const container =
    user.extra !== undefined && Object.hasOwn(user.extra, outer) ? user.extra[outer] : undefined;
  if (typeof container !== "object" || container === null || Array.isArray(container))
    return undefined;
  return Object.hasOwn(container, inner)
    ? (container as Record<string, unknown>)[inner]
    : undefined;
}

/** Whether `includeDeactivated` of a page takes in this deactivated user. */
function takesDeactivated(include: boolean | UserExtraMatch, user: UserRecord): boolean {
  return typeof include === "boolean" ? include : extraValue(user, include.extra) === include.value;
}

/** The key of an awaited value in the index. */
function awaitKey(field: string, value: string): string {
  return `${field}\u0000${value}`;
}

/**
 * The users by uuid, in insertion order, with an index of their usernames ignoring ASCII case, kept
 * by every write (a Map's own set, delete and clear), so that a look-up by username costs what its
 * matches cost, not the number of users.
 */
class UserMap {
  readonly #users = new Map<string, UserRecord>();
  /**
   * The uuid, or uuids, whose username is each ASCII-lowercased value: most names have one
   * holder, so a plain uuid saves a Set per user on the write path.
   */
  readonly #byUsername = new Map<string, string | Set<string>>();

  get(uuid: string): UserRecord | undefined {
    return this.#users.get(uuid);
  }

  set(uuid: string, user: UserRecord): void {
    const before = this.#users.get(uuid)?.username;
    this.#users.set(uuid, user);
    // Most writes keep the username: the index stays as it is.
    if (before === user.username) return;
    if (before !== undefined) this.#unindex(uuid, before);
    if (user.username !== undefined) this.#index(uuid, user.username);
  }

  delete(uuid: string): void {
    const before = this.#users.get(uuid)?.username;
    if (before !== undefined) this.#unindex(uuid, before);
    this.#users.delete(uuid);
  }

  clear(): void {
    this.#users.clear();
    this.#byUsername.clear();
  }

  values(): IterableIterator<UserRecord> {
    return this.#users.values();
  }

  /** The users whose username equals `username` ignoring ASCII case, in insertion order. */
  withUsername(username: string): UserRecord[] {
    const holders = this.#byUsername.get(asciiLowerCase(username));
    if (holders === undefined) return [];
    if (typeof holders === "string") {
      const user = this.#users.get(holders);
      return user === undefined ? [] : [user];
    }
    // Several holders (names differing only in case, or no unique rule): the Map's own order.
    const users: UserRecord[] = [];
    for (const [uuid, user] of this.#users) if (holders.has(uuid)) users.push(user);
    return users;
  }

  #index(uuid: string, username: string): void {
    const key = asciiLowerCase(username);
    const holders = this.#byUsername.get(key);
    if (holders === undefined) this.#byUsername.set(key, uuid);
    else if (typeof holders === "string") this.#byUsername.set(key, new Set([holders, uuid]));
    else holders.add(uuid);
  }

  #unindex(uuid: string, username: string): void {
    const key = asciiLowerCase(username);
    const holders = this.#byUsername.get(key);
    if (holders === uuid) this.#byUsername.delete(key);
    else if (typeof holders === "object") {
      holders.delete(uuid);
      if (holders.size === 1) this.#byUsername.set(key, holders.values().next().value as string);
    }
  }
}

/** A deep copy: the documented fields are strings, so only `extra` needs copying (JSON data). */
function copy(user: UserRecord): UserRecord {
  const result = { ...user };
  if (user.extra !== undefined) result.extra = jsonCopy(user.extra);
  return result;
}

/** A step as it leaves the store: the records it names are copies the caller may change. */
function detached(step: QuarantineStep): QuarantineStep {
  switch (step.outcome) {
    case "kept":
      return {
        ...step,
        pending: jsonCopy(step.pending),
        cleared: step.cleared && copy(step.cleared),
      };
    case "released":
      return { ...step, pending: jsonCopy(step.pending) };
    case "deleted":
      return { ...step, discarded: step.discarded && jsonCopy(step.discarded) };
    default:
      return step;
  }
}
