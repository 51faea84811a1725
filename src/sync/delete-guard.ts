// The mass-delete guard: how many deletes a cycle may send before it sends anything, judged on the
// cycle alone and on the deletes of a rolling window before it, and the operator's allowance,
// spent by the first cycle the guard would stop.
import type { DeleteGuardStop, SyncTargetOptions } from "./directory-sync-types.ts";

/** The delete guard's default thresholds (docs/directory-sync.md). */
const defaultMaxDeletes = 500;
const defaultMaxPercent = 20;
const defaultWindowMs = 24 * 60 * 60_000;
/** Below this many deletes, the percentage does not trip the guard (deleting every user does). */
const percentFloor = 20;

/** Thrown inside a cycle's plan when the delete guard stops it: nothing is sent. */
export class DeleteGuardError extends Error {
  readonly stop: DeleteGuardStop;
  constructor(stop: DeleteGuardStop) {
    super(stop.message);
    this.stop = stop;
  }
}

/** Where the guard keeps the deletes of its window: the state file, so a restart keeps them. */
export interface DeleteWindowStore {
  read(): string | undefined;
  write(value: string | undefined): void;
}

/** The guard of one sync, across its cycles: see {@link createDeleteGuard}. */
export interface DeleteGuardRun {
  /** A cycle starts: what it deletes is its own. */
  beginCycle(): void;
  /**
   * Throws a {@link DeleteGuardError} when `deletes`, of the users the application holds (`held`,
   * asked only when there are deletes to judge), is more than the guard lets this cycle send;
   * called once a cycle, before its first destructive message. With `resetUnanswered`, the stop
   * says that a reset sent earlier was never acknowledged (the application may hold none of them).
   */
  judge(deletes: number, held: () => number, context?: JudgeContext): void;
  /**
   * Judges a reset when the state does not know what the application holds (`held` 0: a new or
   * lost state file; else a file taken over from another application): the reset may remove
   * every user the application holds, and only the `read` users the directory returned come
   * back. Only `allowDeleteAll` allows it.
   */
  judgeBlindReset(read: number, held: number): void;
  /**
   * Counts deletes the application acknowledged: a delete (its uuid), or the users a reset
   * removed (`"all"` of those it was judged on).
   */
  deleted(count: number, uuid: string | "all"): void;
  /**
   * How many deletes an allowance let through this cycle (the operator's, or what remained of one
   * a failure interrupted), or undefined when none was used on it.
   */
  readonly allowed: number | undefined;
}

type Window = [at: number, deletes: number][];

/** What a stop says besides the counts. */
export interface JudgeContext {
  /** A reset sent earlier was never acknowledged: the application may hold none of the users. */
  resetUnanswered?: boolean;
  /** The deletes are those of a reset, whose read skipped this many entries. */
  reset?: { skipped: number };
  /**
   * The uuids of the deletes, read only when an allowance is used: an allowance that a failure
   * interrupted covers the rest of the same users in a later cycle, and no other.
   */
  uuids?: () => Iterable<string>;
}

/**
 * The guard of a sync, from its options. The allowance (`allowDeletes`, `allowDeleteAll`) is
 * pending until the first cycle the guard would stop, which spends it whether it covers that
 * cycle or not: an allowance granted for one clean-up never lets through a later mistake.
 */
export function createDeleteGuard(
  options: Pick<SyncTargetOptions, "deleteGuard" | "allowDeletes" | "allowDeleteAll" | "now">,
  store: DeleteWindowStore,
): DeleteGuardRun {
  const guard = options.deleteGuard;
  const settings = guard === false ? {} : (guard ?? {});
  checkSettings(settings, options.allowDeletes);
  const now = options.now ?? Date.now;
  const maxDeletes = settings.maxDeletes ?? defaultMaxDeletes;
  const maxPercent = settings.maxPercent ?? defaultMaxPercent;
  const windowMs = settings.windowMs ?? defaultWindowMs;
  const thresholds: Thresholds = { maxDeletes, maxPercent, windowMs };
  let allowance: { deletes: number; all: boolean } | undefined =
    (options.allowDeletes ?? 0) > 0 || options.allowDeleteAll === true
      ? { deletes: options.allowDeletes ?? 0, all: options.allowDeleteAll === true }
      : undefined;
  let cycleStart = 0;
  let allowed: number | undefined;
  /**
   * The users an allowance let a cycle delete that are not deleted yet (a 503 stopped it): a later
   * cycle whose deletes are all among them is let through without a new allowance, as the
   * operator allowed exactly those. In memory, as the allowance is: a restart gives neither.
   */
  let remaining: { uuids: Set<string>; all: boolean; blind?: true } | undefined;

  const current = (at: number): Window => windowEntries(store, at, windowMs);

  return {
    beginCycle() {
      cycleStart = now();
      allowed = undefined;
    },
    get allowed() {
      return allowed;
    },
    judge(deletes, held, context = {}) {
      if (deletes === 0 || guard === false) return;
      const holding = held();
      const before = current(now()).reduce((sum, [, count]) => sum + count, 0);
      const all = deletes >= holding;
      let why = stopReason({ deletes, holding, before, all, reset: context.reset }, thresholds);
      if (why === undefined) return;
      if (context.resetUnanswered) {
        why +=
          " A reset (POST /v1/reset) sent earlier was never acknowledged (the sync stopped or its answer was lost): if the application applied it, it holds none of these users, and the next full re-sync creates them again.";
      }
      if (remaining !== undefined && (remaining.all || !all) && context.uuids !== undefined) {
        const left = remaining.uuids;
        if ([...context.uuids()].every((uuid) => left.has(uuid))) {
          allowed = deletes;
          return;
        }
      }
      const spent = allowance;
      allowance = undefined;
      // allowDeleteAll covers any count; a count never covers every user.
      if (spent !== undefined && (spent.all || (!all && deletes <= spent.deletes))) {
        allowed = deletes;
        remaining =
          context.uuids === undefined
            ? undefined
            : { uuids: new Set(context.uuids()), all: spent.all };
        // The operator checked the deletes so far: they no longer count against later cycles.
        store.write(undefined);
        return;
      }
      const unused =
        spent === undefined
          ? ""
          : ` The allowance given (${spent.all ? "allowDeleteAll" : `allowDeletes: ${spent.deletes}`}) did not cover this cycle and is spent.`;
      throw new DeleteGuardError({
        deletes,
        held: holding,
        ...(before > 0 && { windowDeletes: before }),
        message: `${why}${unused}`,
      });
    },
    judgeBlindReset(read, held) {
      if (guard === false) return;
      if (remaining?.blind) {
        allowed = 0;
        return;
      }
      const spent = allowance;
      allowance = undefined;
      if (spent?.all) {
        allowed = 0;
        // Until the reset is acknowledged, a failure that stops it leaves it allowed.
        remaining = { uuids: new Set(), all: true, blind: true };
        store.write(undefined);
        return;
      }
      const state =
        held === 0
          ? "The state file holds no user (a new or lost file)"
          : `The state file was taken over from another application (its ${held} users are that one's)`;
      throw new DeleteGuardError({
        deletes: 0,
        held,
        message:
          `${state}, so the sync does not know which users this application holds: POST /v1/reset ` +
          `would remove every one of them, however many, and only the ${read} users the directory ` +
          "returned would come back. No reset was sent. To rebuild the application's users without " +
          "removing any, run the full re-sync without the reset (resetRequest: false, sync --full " +
          "without --reset-request): it creates every user the directory returns. If removing every " +
          "other user is meant, allow it once: allowDeleteAll: true (sync --allow-delete-all)." +
          (spent === undefined
            ? ""
            : ` The allowance given (allowDeletes: ${spent.deletes}) did not cover this cycle and is spent.`),
      });
    },
    deleted(count, uuid) {
      if (remaining !== undefined) {
        if (uuid === "all") remaining = undefined;
        else {
          remaining.uuids.delete(uuid);
          if (remaining.uuids.size === 0) remaining = undefined;
        }
      }
      if (count <= 0 || guard === false || windowMs <= 0 || allowed !== undefined) return;
      const entries = current(now());
      const last = entries.at(-1);
      if (last !== undefined && last[0] === cycleStart) last[1] += count;
      else entries.push([cycleStart, count]);
      store.write(JSON.stringify(entries));
    },
  };
}

/** Throws a TypeError for a threshold or an allowance that is not a number of 0 or more. */
function checkSettings(
  settings: { maxDeletes?: number; maxPercent?: number; windowMs?: number },
  allowDeletes: number | undefined,
): void {
  for (const [name, value] of [
    ["deleteGuard.maxDeletes", settings.maxDeletes],
    ["deleteGuard.maxPercent", settings.maxPercent],
    ["deleteGuard.windowMs", settings.windowMs],
    ["allowDeletes", allowDeletes],
  ] as const) {
    if (value !== undefined && !(typeof value === "number" && value >= 0 && !Number.isNaN(value))) {
      throw new TypeError(`${name} must be a number of 0 or more, not ${String(value)}`);
    }
  }
}

/** The window's entries still inside it (an entry from the future counts until it ages out). */
function windowEntries(store: DeleteWindowStore, at: number, windowMs: number): Window {
  if (windowMs <= 0) return [];
  let entries: unknown;
  try {
    entries = JSON.parse(store.read() ?? "[]");
  } catch {
    entries = [];
  }
  if (!Array.isArray(entries)) return [];
  return entries.filter(
    (entry): entry is [number, number] =>
      Array.isArray(entry) &&
      Number.isSafeInteger(entry[0]) &&
      Number.isSafeInteger(entry[1]) &&
      entry[1] > 0 &&
      at - entry[0] < windowMs,
  );
}

/** The guard's settings, defaults applied. */
interface Thresholds {
  maxDeletes: number;
  maxPercent: number;
  windowMs: number;
}

/**
 * Why the guard stops a cycle's `deletes` (of the `holding` users held, after `before` deletes
 * in the window), with the fix; undefined when the thresholds let them through.
 */
function stopReason(
  cycle: {
    deletes: number;
    holding: number;
    before: number;
    all: boolean;
    reset: { skipped: number } | undefined;
  },
  { maxDeletes, maxPercent, windowMs }: Thresholds,
): string | undefined {
  const { deletes, holding, before, all, reset } = cycle;
  const allow = `If they are meant, allow them once: allowDeletes: ${deletes} (sync --allow-deletes ${deletes}).`;
  // A reset's deletes are the users its creates would not bring back: gone from the directory,
  // or skipped by the read (no username, a disabled account kept).
  const skipped =
    reset === undefined || reset.skipped === 0
      ? ""
      : ` (the read skipped ${reset.skipped} entries: see skippedEntries for why)`;
  const check = `Check the base DN and the filter${reset === undefined ? "" : ", and the mapping"}.`;
  const would =
    reset === undefined
      ? `This cycle would delete ${deletes} of the ${holding} users the application holds`
      : `POST /v1/reset would remove ${deletes} of the ${holding} users the application holds for good, as the read its creates come from does not return them${skipped}`;
  const sent = reset === undefined ? "no delete was sent" : "no reset was sent";
  if (all) {
    const why =
      reset === undefined
        ? `The directory returned none of the ${holding} users the application holds: refusing to delete them all. ${check}`
        : `POST /v1/reset would remove all ${holding} users the application holds, and the read its creates come from returns none of them${skipped}: refusing to delete them all; no reset was sent. ${check}`;
    return `${why} If that is meant, allow it once: allowDeleteAll: true (sync --allow-delete-all); no count allows it.`;
  }
  if (deletes > maxDeletes) return `${would}, more than ${maxDeletes}: ${sent}. ${check} ${allow}`;
  if (deletes >= percentFloor && deletes * 100 > holding * maxPercent) {
    return `${would}, more than ${maxPercent} %: ${sent}. ${check} ${allow}`;
  }
  if (before === 0) return undefined;
  // The window: the deletes of the last `windowMs` and this cycle's, of the users held before
  // them, against the same thresholds.
  const total = before + deletes;
  const base = holding + before;
  const over =
    total > maxDeletes
      ? `more than ${maxDeletes}`
      : total >= percentFloor && total * 100 > base * maxPercent
        ? `more than ${maxPercent} %`
        : undefined;
  if (over === undefined) return undefined;
  const windowText =
    windowMs % 3_600_000 === 0 ? `${windowMs / 3_600_000} h` : `${windowMs / 1000} s`;
  return `${reset === undefined ? "This cycle would delete" : "POST /v1/reset would remove"} ${deletes} users, after ${before} deleted in the last ${windowText}: ${total} of the ${base} users the application held, ${over}: ${sent}. ${check} If they are meant, allow them once (allowDeletes: ${deletes}, sync --allow-deletes ${deletes}): the deletes of the window before it are then accepted too.`;
}
