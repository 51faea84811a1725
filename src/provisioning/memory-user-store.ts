import { mergeUser } from "./merge-user.ts";
import type { UserPatch, UserRecord } from "./user-record.ts";
import type { UpsertResult, UserStore } from "./user-store.ts";

/**
 * A {@link UserStore} in a Map: for tests, demos and single-process prototypes. Users are lost
 * when the process ends.
 */
export class MemoryUserStore implements UserStore {
  readonly #users = new Map<string, UserRecord>();

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    const existing = this.#users.get(patch.uuid);
    const user = mergeUser(existing, patch);
    this.#users.set(patch.uuid, user);
    return { created: existing === undefined, user: copy(user) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    return { deleted: this.#users.delete(uuid) };
  }

  async reset(): Promise<void> {
    this.#users.clear();
  }

  /** The stored user with this uuid, as a copy, or undefined. */
  get(uuid: string): UserRecord | undefined {
    const user = this.#users.get(uuid);
    return user && copy(user);
  }

  /** Every stored user, as copies, in insertion order. */
  list(): UserRecord[] {
    return [...this.#users.values()].map(copy);
  }
}

/** A deep copy: the documented fields are strings, so only `extra` needs a structured clone. */
function copy(user: UserRecord): UserRecord {
  const result = { ...user };
  if (user.extra !== undefined) result.extra = structuredClone(user.extra);
  return result;
}
