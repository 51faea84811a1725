// Users whose creation is stored but whose `onChange({ type: "created" })` failed: the platform
// sends the message again, and by then the store reports the user as existing. Until the hook
// accepts the creation, every later write of that uuid reports it as `created`.
import type { UserRecord } from "../users/user-record.ts";

/**
 * The creations `onChange` has not yet accepted, by uuid, in the handler's memory: a restart, or a
 * redelivery that reaches another replica, forgets them (the store alone cannot tell a redelivered
 * creation from an update). A reset forgets them all.
 */
export class UnreportedCreations {
  readonly #users = new Map<string, UserRecord>();

  /** The change type to report for a write of `uuid` whose store result says `created`. */
  typeOf(uuid: string, created: boolean): "created" | "updated" {
    // The size check spares the common case (no hook ever failed) a hash of the uuid.
    return created || (this.#users.size !== 0 && this.#users.has(uuid)) ? "created" : "updated";
  }

  /** After the hook ran for a write of `uuid`: forget it, or keep it when a creation failed. */
  settle(uuid: string, type: "created" | "updated", user: UserRecord, accepted: boolean): void {
    if (accepted) {
      if (this.#users.size !== 0) this.#users.delete(uuid);
    } else if (type === "created") this.#users.set(uuid, user);
  }

  /** The user stored last for an unreported creation of `uuid`, taken out of the record. */
  take(uuid: string): UserRecord | undefined {
    if (this.#users.size === 0) return undefined;
    const user = this.#users.get(uuid);
    this.#users.delete(uuid);
    return user;
  }

  /** Puts back a creation that `take` gave out and the hook refused again. */
  restore(uuid: string, user: UserRecord): void {
    this.#users.set(uuid, user);
  }

  clear(): void {
    this.#users.clear();
  }
}
