// The quarantine's releases: each woken user tried in its own turn (deferred while the turn is
// held), a failed release left due, and one request's settle bounded.
import type { KeyedLock } from "./keyed-lock.ts";
import type { QuarantineHooks } from "./quarantine-hooks.ts";
import type { QuarantineMethods, QuarantineStep } from "./quarantine-store.ts";
import type { QuarantineOptions } from "./quarantine-types.ts";

// How many users whose release failed one settle tries again, besides those it woke: a store
// that keeps failing costs each request a bounded number of steps.
const duePerSettle = 8;

// How many releases one request's settle runs at most, woken and due users together.
const releasesPerSettle = 32;

// How many times one settle tries the same user: a release can wake a user twice (it waits for
// two values freed one after the other), never more in a chain that ends.
const triesPerSettle = 2;

/** The release side of the quarantine, as `createQuarantine` uses it. */
export interface Releases {
  /** See `Quarantine.finish`. */
  finish(uuid: string): Promise<string[]>;
  /** See `Quarantine.settle`. */
  settle(wakes: readonly string[]): Promise<void> | undefined;
  /** Releases each of `uuids` in its turn, and whom they wake, unbounded (a retry pass). */
  settleAll(uuids: readonly string[]): Promise<number>;
  /** A step tried the user's record: it is no longer due. */
  tried(uuid: string): void;
}

/** The releases of one quarantine over the store's methods and the handler's lanes. */
export function createReleases(
  store: QuarantineMethods,
  lanes: KeyedLock,
  hooks: QuarantineHooks,
  { logger, report }: Pick<QuarantineOptions, "logger" | "report">,
): Releases {
  // Users whose release was asked for while their turn was held: the holder runs it on finish.
  const deferred = new Set<string>();
  // Woken users whose release failed (the store busy, a connection lost): the value they await
  // is free, so nothing else would wake them. Tried again by the next request's settle and the
  // next retry pass; the failure is reported once, when the user becomes due.
  const due = new Set<string>();

  /** One release of a user whose turn the caller holds, with its hooks; resolves what it woke. */
  async function releaseHeld(uuid: string, inPass: boolean): Promise<QuarantineStep> {
    const step = await store.releaseQuarantined(uuid);
    await hooks.told(step, "modify", logger, inPass);
    if (step.outcome === "released") {
      const { result, pending } = step;
      await hooks.changed(
        { type: result.created ? "created" : "updated", uuid, user: result.user },
        pending.patch,
        inPass,
      );
    }
    return step;
  }

  function finish(uuid: string): Promise<string[]> {
    return finishIn(uuid, false);
  }

  async function finishIn(uuid: string, inPass: boolean): Promise<string[]> {
    let wakes: string[] = [];
    try {
      // Once: a hook that asks again while this release runs is served by the next turn.
      if (deferred.delete(uuid)) {
        wakes = (await releaseHeld(uuid, inPass)).wakes;
        due.delete(uuid);
      }
    } catch (error) {
      failed(error, uuid);
    } finally {
      lanes.release(uuid);
    }
    return wakes;
  }

  async function settleCounting(wakes: readonly string[], inPass: boolean): Promise<number> {
    const queue = [...wakes];
    const tries = new Map<string, number>();
    let released = 0;
    let steps = 0;
    for (let uuid = queue.shift(); uuid !== undefined; uuid = queue.shift()) {
      // A request's settle is bounded: the rest of a long chain (each woken user passing a value
      // on to the next) is due, tried by the next requests. A pass tries everyone anyway.
      if (!inPass && steps >= releasesPerSettle) {
        due.add(uuid);
        continue;
      }
      const tried = tries.get(uuid) ?? 0;
      if (tried >= triesPerSettle) continue;
      tries.set(uuid, tried + 1);
      // Never wait for a turn here: the caller may hold one (a hook). A busy user's holder
      // releases it when it finishes, after the step that holds it now.
      if (!lanes.tryAcquire(uuid)) {
        deferred.add(uuid);
        continue;
      }
      // Tried now: a try asked for while another held its turn is served by this one.
      deferred.delete(uuid);
      let finished = false;
      steps++;
      try {
        const step = await releaseHeld(uuid, inPass);
        due.delete(uuid);
        if (step.outcome === "released") released++;
        queue.push(...step.wakes);
        finished = true;
        queue.push(...(await finishIn(uuid, inPass)));
      } catch (error) {
        // Stays pending, and due; the write that woke it is stored and answered.
        failed(error, uuid);
        if (!finished) queue.push(...(await finishIn(uuid, inPass)));
      }
    }
    return released;
  }

  /** A release that failed: the user is due, and the first failure of it reported. */
  function failed(error: unknown, uuid: string): void {
    if (due.has(uuid)) return;
    due.add(uuid);
    report(error, { operation: "modify", uuid, status: 503 });
  }

  function settle(wakes: readonly string[]): Promise<void> | undefined {
    if (wakes.length === 0 && due.size === 0) return undefined;
    const tries = [...wakes];
    for (const uuid of due) {
      if (tries.length >= wakes.length + duePerSettle) break;
      tries.push(uuid);
    }
    return settleCounting(tries, false).then(() => undefined);
  }

  return {
    finish,
    settle,
    settleAll: (uuids) => settleCounting(uuids, true),
    tried: (uuid) => void due.delete(uuid),
  };
}
