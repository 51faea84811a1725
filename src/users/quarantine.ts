// The handler's quarantine: a message the store refuses with a UserConflictError is kept in the
// store, merged into that user's one pending record, and answered with success, so that one record
// the application cannot take never pauses the whole directory. Every change of a user goes
// through one atomic store step (see quarantine-store.ts); a step that frees a unique value names
// the pending users waiting for it (`wakes`), and only those are tried again, each in its own
// step and turn: a write costs the same however many users are kept.
import type { Logger } from "../internal/logger.ts";
import { lazyInstruments, type OpenTelemetryApi, scopeOf } from "../internal/telemetry.ts";
import type { KeyedLock } from "./keyed-lock.ts";
import type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "./quarantine-store.ts";
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

// How many users whose release failed one settle tries again, besides those it woke: a store
// that keeps failing costs each request a bounded number of steps.
const duePerSettle = 8;

// How many releases one request's settle runs at most, woken and due users together.
const releasesPerSettle = 32;

// How many times one settle tries the same user: a release can wake a user twice (it waits for
// two values freed one after the other), never more in a chain that ends.
const triesPerSettle = 2;

export function createQuarantine(options: QuarantineOptions): Quarantine {
  const { lanes, logger, onChange, onQuarantine, report } = options;
  const store = quarantineMethodsOf(options.store);
  const counts = { kept: 0, released: 0, discarded: 0, waiting: 0 };
  // Users whose release was asked for while their turn was held: the holder runs it on finish.
  const deferred = new Set<string>();
  // The retry pass in flight, the one pass that follows it, and how many of the running pass's
  // hooks are being awaited (a retry from one of them must not wait for any pass).
  let passing: Promise<QuarantineRetry> | undefined;
  let following: Promise<QuarantineRetry> | undefined;
  let passHooks = 0;
  // Woken users whose release failed (the store busy, a connection lost): the value they await
  // is free, so nothing else would wake them. Tried again by the next request's settle and the
  // next retry pass; the failure is reported once, when the user becomes due.
  const due = new Set<string>();
  const instruments = lazyInstruments((api: OpenTelemetryApi) =>
    scopeOf(api).meter.createCounter("platform_integration.provisioning.quarantine", {
      description:
        "Provisioning messages kept in the quarantine, and pending users released from it or discarded, by event.",
      unit: "{message}",
    }),
  );

  async function tell(type: QuarantineEvent["type"], pending: PendingUser, inPass = false) {
    counts[type]++;
    instruments()?.add(1, { "platform_integration.quarantine.event": type });
    if (onQuarantine === undefined) return;
    if (inPass) passHooks++;
    try {
      await onQuarantine({ type, pending: shown(pending) });
    } catch (error) {
      report(
        error,
        { operation: pending.operation, uuid: pending.uuid, status: 500 },
        pending.patch,
      );
    } finally {
      if (inPass) passHooks--;
    }
  }

  /** A change no message will bring again: a failing hook is reported, the answer unchanged. */
  async function changed(change: QuarantineChange, patch?: UserPatch, inPass = false) {
    if (onChange === undefined) return;
    if (inPass) passHooks++;
    try {
      await onChange(change);
    } catch (error) {
      report(error, { operation: "modify", uuid: change.uuid, status: 500 }, patch);
    } finally {
      if (inPass) passHooks--;
    }
  }

  /** The events of a step; `onChange` for the step's own applied write is the caller's. */
  async function told(
    step: QuarantineStep,
    operation: "create" | "modify",
    log: Logger = logger,
    inPass = false,
  ): Promise<void> {
    switch (step.outcome) {
      case "kept": {
        const { pending, cleared } = step;
        log.warn(
          `platform-integration: kept the ${operation} of user ${JSON.stringify(pending.uuid)} in the quarantine and answered success, so that the directory keeps flowing: ${withoutPassword(pending.reason, pending.patch.password)}. It applies by itself once another user frees the value it waits for (or on handler.retryQuarantined()); handler.quarantined() lists what is kept.`,
          { operation, uuid: pending.uuid, fields: pending.fields },
        );
        if (pending.attempts === 1) counts.waiting++;
        // The conflicting fields were cleared from the stored user: a change of its own.
        if (cleared !== undefined) {
          await changed(
            { type: "updated", uuid: cleared.uuid, user: cleared },
            pending.patch,
            inPass,
          );
        }
        await tell("kept", pending, inPass);
        return;
      }
      case "released":
        counts.waiting = Math.max(0, counts.waiting - 1);
        await tell("released", step.pending, inPass);
        return;
      case "deleted":
        if (step.discarded !== undefined) {
          counts.waiting = Math.max(0, counts.waiting - 1);
          await tell("discarded", step.discarded, inPass);
        }
        return;
      default:
        return;
    }
  }

  async function write(
    operation: "create" | "modify",
    patch: UserPatch,
    log?: Logger,
  ): Promise<QuarantineStep> {
    const step = await store.writeQuarantined(operation, patch);
    // The step tried the user's record: no longer due.
    due.delete(patch.uuid);
    await told(step, operation, log);
    return step;
  }

  async function remove(uuid: string): Promise<QuarantineStep> {
    const step = await store.deleteQuarantined(uuid);
    due.delete(uuid);
    await told(step, "modify");
    return step;
  }

  /** One release of a user whose turn the caller holds, with its hooks; resolves what it woke. */
  async function releaseHeld(uuid: string, inPass: boolean): Promise<QuarantineStep> {
    const step = await store.releaseQuarantined(uuid);
    await told(step, "modify", logger, inPass);
    if (step.outcome === "released") {
      const { result, pending } = step;
      await changed(
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

  /** One pass over every pending user, oldest first. */
  async function pass(): Promise<QuarantineRetry> {
    const pending = await store.listQuarantined();
    const released = await settleCounting(
      pending.map((user) => user.uuid),
      true,
    );
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
    if (passHooks > 0) return Promise.resolve({ released: 0, kept: counts.waiting });
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

  return { write, remove, finish, settle, retry, list, stats: () => ({ ...counts }) };
}

/** A pending user as it may leave the handler: without the password, in its text or its fields. */
function shown(pending: PendingUser): QuarantinedUser {
  const { password, ...user } = pending.patch;
  return {
    uuid: pending.uuid,
    operation: pending.operation,
    user,
    reason: withoutPassword(pending.reason, password),
    fields: [...pending.fields],
    awaits: pending.awaits.map((awaited) => ({ ...awaited })),
    since: pending.since,
    attempts: pending.attempts,
    messages: pending.messages,
  };
}

function withoutPassword(text: string, password: string | null | undefined): string {
  return typeof password === "string" && password !== ""
    ? text.replaceAll(password, "[redacted]")
    : text;
}
