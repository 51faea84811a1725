// The pending records a store still holds while the quarantine is off: a write of such a user
// merges after its record, a delete discards it, so that none applies later over a newer change.
import type { Logger } from "../internal/logger.ts";
import type { QuarantineMethods, QuarantineStep } from "./quarantine-store.ts";
import type { UserPatch } from "./user-record.ts";
import type { UserStore } from "./user-store.ts";

/** What a handler with the quarantine off does with the pending records a store still holds. */
export interface Held {
  /** False once the store is known to hold no record for the uuid (synchronous: the hot path). */
  may(uuid: string): boolean;
  /**
   * Writes through the uuid's pending record when it has one (undefined otherwise: the caller
   * upserts): the patch merges after the record, and the step applies both or keeps both.
   */
  write(operation: "create" | "modify", patch: UserPatch): Promise<QuarantineStep | undefined>;
  /**
   * Deletes the user and discards its pending record in one step, when it has one; false
   * otherwise (the caller deletes).
   */
  remove(uuid: string): Promise<boolean>;
}

/**
 * With the quarantine off, a store with the quarantine methods may still hold pending records,
 * kept while the option was on (in an earlier run, or by another replica). Left alone, one would
 * apply later (the option turned on again, `retryQuarantined()`) over a message acknowledged
 * meanwhile: a deleted user back, a newer field undone. So the handler reads which uuids the store
 * holds, once, at its first message, and then a delete of one of them discards its record in the
 * same step, and a write of one is merged after its record, in one step: the record's
 * acknowledged fields are not lost, and the newer message's fields win. Other users take the
 * plain path. Undefined for a store without the methods.
 */
export function heldOver(store: UserStore, logger: Logger): Held | undefined {
  const names = ["writeQuarantined", "deleteQuarantined", "listQuarantined"] as const;
  if (names.some((name) => typeof store[name] !== "function")) return undefined;
  const methods = store as UserStore & QuarantineMethods;
  let uuids: Set<string> | undefined;
  let reading: Promise<Set<string>> | undefined;
  async function read(): Promise<Set<string>> {
    const pending = await methods.listQuarantined();
    if (pending.length > 0) {
      const named = pending.slice(0, 5).map((user) => JSON.stringify(user.uuid));
      if (pending.length > 5) named.push("...");
      logger.warn(
        `platform-integration: the quarantine option is off, but the store holds ${pending.length} user(s) kept while it was on (${named.join(", ")}). So that none applies later over a newer message, each one's next create or modify is merged after its record and applied with it (kept with it while it still conflicts, and answered with success: it is stored), and a delete discards it. Turn the quarantine on to have them applied when the values they wait for are freed.`,
        { kept: pending.length },
      );
    }
    uuids = new Set(pending.map((user) => user.uuid));
    return uuids;
  }
  // Read once, at the first message: a failed read fails that message (503) and is tried again.
  const once = () => (reading ??= read().finally(() => (reading = undefined)));
  return {
    // Most stores hold none: then no uuid is hashed for the look-up.
    may: (uuid) => uuids === undefined || (uuids.size > 0 && uuids.has(uuid)),
    async write(operation, patch) {
      const known = uuids ?? (await once());
      if (known.size === 0 || !known.has(patch.uuid)) return undefined;
      const step = await methods.writeQuarantined(operation, patch);
      if (step.outcome === "applied" || step.outcome === "released") known.delete(patch.uuid);
      return step;
    },
    async remove(uuid) {
      const known = uuids ?? (await once());
      if (!known.has(uuid)) return false;
      await methods.deleteQuarantined(uuid);
      known.delete(uuid);
      return true;
    },
  };
}
