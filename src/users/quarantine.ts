// The handler's quarantine: a message the store refuses with a UserConflictError is kept in the
// store, merged into that user's one pending record, and answered with success, so that one record
// the application cannot take never pauses the whole directory. Every change of a user goes
// through one atomic store step (see quarantine-store.ts); a step that frees a unique value names
// the pending users waiting for it (`wakes`), and only those are tried again, each in its own
// step and turn: a write costs the same however many users are kept.
import type { Logger } from "../internal/logger.ts";
import { createQuarantineHooks, shown } from "./quarantine-hooks.ts";
import { createReleases } from "./quarantine-releases.ts";
import type { QuarantineMethods, QuarantineStep } from "./quarantine-store.ts";
import type {
  Quarantine,
  QuarantinedUser,
  QuarantineOptions,
  QuarantineRetry,
} from "./quarantine-types.ts";
import type { UserPatch } from "./user-record.ts";
import type { UserStore } from "./user-store.ts";

const quarantineMethodNames = [
  "writeQuarantined",
  "releaseQuarantined",
  "deleteQuarantined",
  "listQuarantined",
] as const;

/** The store's quarantine methods, or a TypeError that names those it lacks. */
export function quarantineMethodsOf(store: UserStore): QuarantineMethods {
  const missing = quarantineMethodNames.filter((name) => typeof store[name] !== "function");
  if (missing.length > 0) {
    throw new TypeError(
      `quarantine is true but the store has no ${missing.join(", ")}: the pending users live in the store (MemoryUserStore, SqliteUserStore and PostgresUserStore have them; testUserStore checks yours), or leave quarantine off`,
    );
  }
  return store as UserStore & QuarantineMethods;
}

/** The quarantine over the store's methods: its steps with their events, releases and retries. */
export function createQuarantine(options: QuarantineOptions): Quarantine {
  const store = quarantineMethodsOf(options.store);
  const hooks = createQuarantineHooks(options);
  const { counts } = hooks;
  const releases = createReleases(store, options.lanes, hooks, options);
  // The retry pass in flight, and the one pass that follows it.
  let passing: Promise<QuarantineRetry> | undefined;
  let following: Promise<QuarantineRetry> | undefined;

  async function write(
    operation: "create" | "modify",
    patch: UserPatch,
    log?: Logger,
  ): Promise<QuarantineStep> {
    const step = await store.writeQuarantined(operation, patch);
    // The step tried the user's record: no longer due.
    releases.tried(patch.uuid);
    // An applied write has no event of the quarantine's (its onChange is the caller's): most writes.
    if (step.outcome !== "applied") await hooks.told(step, operation, log);
    return step;
  }

  async function remove(uuid: string): Promise<QuarantineStep> {
    const step = await store.deleteQuarantined(uuid);
    releases.tried(uuid);
    await hooks.told(step, "modify");
    return step;
  }

  /** One pass over every pending user, oldest first. */
  async function pass(): Promise<QuarantineRetry> {
    const pending = await store.listQuarantined();
    const released = await releases.settleAll(pending.map((user) => user.uuid));
    const left = await store.listQuarantined();
    counts.waiting = left.length;
    return { released, kept: left.length };
  }

  function startPass(): Promise<QuarantineRetry> {
    const running = pass().finally(() => {
      if (passing === running) passing = undefined;
    });
    passing = running;
    return running;
  }

  // Calls coalesce: one pass runs at a time and never starts another inside it. A hook of the
  // pass in flight (which that pass awaits) is answered at once: the pass covers it, and waiting
  // for any pass would wait on itself. Any other call during a pass joins the one pass that
  // follows it, so a value freed by hand meanwhile is seen; however many call, one pass follows.
  function retry(): Promise<QuarantineRetry> {
    if (passing === undefined) return startPass();
    if (hooks.passHooks() > 0) return Promise.resolve({ released: 0, kept: counts.waiting });
    following ??= passing
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        following = undefined;
        return passing ?? startPass();
      });
    return following;
  }

  async function list(): Promise<QuarantinedUser[]> {
    const pending = await store.listQuarantined();
    counts.waiting = pending.length;
    return pending.map(shown);
  }

  return {
    write,
    remove,
    finish: releases.finish,
    settle: releases.settle,
    retry,
    list,
    stats: () => ({ ...counts }),
  };
}
