import { composePatches } from "./compose-patches.ts";
import { mergeUser } from "./merge-user.ts";
import type {
  QuarantinedEntry,
  QuarantineEntry,
  QuarantineMethods,
  ReleaseOutcome,
} from "./quarantine-store.ts";
import {
  awaitedRead,
  type OnDelete,
  type StoreRulesOptions,
  storeRules,
  type UniqueField,
  uniqueConflict,
  uniqueValue,
} from "./store-rules.ts";
import { isUserConflict } from "./user-conflict-error.ts";
import type { UpsertResult, UserFieldName, UserPatch, UserRecord } from "./user-record.ts";
import type { UserReadOptions, UserStore, UserStoreReads } from "./user-store.ts";

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
  readonly #users = new Map<string, UserRecord>();
  readonly #unique: UniqueField[];
  readonly #onDelete: OnDelete;
  /** For each unique field, the active user holding each value. */
  readonly #holders = new Map<UniqueField, Map<string, string>>();
  #kept: QuarantinedEntry[] = [];
  #nextId = 1;

  constructor(options: MemoryUserStoreOptions = {}) {
    const rules = storeRules("MemoryUserStore", options);
    this.#unique = rules.unique;
    this.#onDelete = rules.onDelete;
    for (const field of this.#unique) this.#holders.set(field, new Map());
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
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
    const existing = this.#users.get(uuid);
    if (existing === undefined || existing.deactivatedAt !== undefined) return { deleted: false };
    this.#release(existing);
    if (this.#onDelete === "delete") this.#users.delete(uuid);
    else this.#users.set(uuid, { ...existing, deactivatedAt: new Date().toISOString() });
    return { deleted: true };
  }

  /** Removes every user and every kept message: the re-sync that follows supersedes them. */
  async reset(): Promise<void> {
    this.#users.clear();
    this.#kept = [];
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

  async keepQuarantined(entry: QuarantineEntry): Promise<QuarantinedEntry> {
    const kept: QuarantinedEntry = {
      ...structuredClone(entry),
      id: String(this.#nextId++),
      since: new Date().toISOString(),
      attempts: 1,
    };
    this.#kept.push(kept);
    this.#vacate(entry.uuid, entry.field);
    return structuredClone(kept);
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<QuarantinedEntry[]> {
    return this.#kept
      .filter((entry) => uuid === undefined || entry.uuid === uuid)
      .map((entry) => structuredClone(entry));
  }

  async releaseQuarantined(uuid: string): Promise<ReleaseOutcome> {
    const entries = this.#kept.filter((kept) => kept.uuid === uuid);
    const oldest = entries[0];
    if (oldest === undefined) return { outcome: "none" };
    try {
      const result = await this.upsert(composePatches(entries.map((entry) => entry.patch)));
      this.#kept = this.#kept.filter((kept) => kept.uuid !== uuid);
      return { outcome: "released", entries: structuredClone(entries), result };
    } catch (error) {
      oldest.attempts++;
      if (!isUserConflict(error)) throw error;
      oldest.reason = error.message;
      if (error.field === undefined) delete oldest.field;
      else oldest.field = error.field;
      this.#vacate(uuid, error.field);
      return { outcome: "kept", entry: structuredClone(oldest), conflict: error };
    }
  }

  async discardQuarantined(uuid: string): Promise<number> {
    const before = this.#kept.length;
    this.#kept = this.#kept.filter((kept) => kept.uuid !== uuid);
    return before - this.#kept.length;
  }

  /** Clears the value of a field whose new value was refused, as the store contract asks. */
  #vacate(uuid: string, field: UserFieldName | undefined): void {
    const user = this.#users.get(uuid);
    if (field === undefined || user?.[field] === undefined) return;
    this.#release(user);
    const vacated = { ...user };
    delete vacated[field];
    this.#users.set(uuid, vacated);
    if (vacated.deactivatedAt === undefined) this.#hold(vacated, undefined);
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

/** A deep copy: the documented fields are strings, so only `extra` needs a structured clone. */
function copy(user: UserRecord): UserRecord {
  const result = { ...user };
  if (user.extra !== undefined) result.extra = structuredClone(user.extra);
  return result;
}
