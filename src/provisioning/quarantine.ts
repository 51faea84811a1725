// The handler's quarantine: a message the store refuses with a UserConflictError is kept in the
// store and answered with success, so that one record the application cannot take never pauses
// the whole directory. Later messages of that uuid wait behind it, in order; every successful
// write (which may have freed the value) and `retryQuarantined()` try the kept ones again, the
// uuid whose oldest message is oldest first, all of a uuid's messages composed in order, under
// the same per-uuid turn as the platform's own messages.
import type { Logger } from "../internal/logger.ts";
import { lazyInstruments, type OpenTelemetryApi, scopeOf } from "../internal/telemetry.ts";
import { composePatches } from "./compose-patches.ts";
import type { KeyedLock } from "./keyed-lock.ts";
import type { QuarantinedEntry, QuarantineEntry, QuarantineMethods } from "./quarantine-store.ts";
import type { ProvisioningChange, ProvisioningErrorContext } from "./types.ts";
import type { UserConflictError } from "./user-conflict-error.ts";
import type { UserFieldName, UserPatch } from "./user-record.ts";
import type { UserStore } from "./user-store.ts";

/** A kept message as the handler shows it: everything but the password. */
export interface QuarantinedMessage {
  /** The store's identifier of the message. */
  id: string;
  uuid: string;
  /** The operation the platform sent, answered with its success status. */
  operation: "create" | "modify";
  /** The fields it carries, without `password`. */
  user: Omit<UserPatch, "password">;
  /** Why it is kept: the store's conflict, or that an earlier message of this user is kept. */
  reason: string;
  /** The conflicting field, when known. */
  field?: UserFieldName;
  /** When it was kept (ISO 8601). */
  since: string;
  /** How many times applying it was tried. */
  attempts: number;
}

/** What the `onQuarantine` hook sees. */
export interface QuarantineEvent {
  /**
   * `kept`: a message entered the quarantine (answered with success); `released`: a kept message
   * applied and left it; `discarded`: the user's delete removed it unapplied.
   */
  type: "kept" | "released" | "discarded";
  message: QuarantinedMessage;
}

/** What `handler.retryQuarantined()` did. */
export interface QuarantineRetry {
  /** Kept messages that applied and left the quarantine. */
  released: number;
  /** Kept messages still waiting. */
  kept: number;
}

/** The quarantine's figures in `handler.stats()`, counted by this handler since it started. */
export interface QuarantineStats {
  /** Messages this handler put in the quarantine. */
  kept: number;
  /** Kept messages this handler applied. */
  released: number;
  /** Kept messages this handler discarded on a delete. */
  discarded: number;
  /** Kept messages waiting, as this handler last read them (all replicas'). */
  waiting: number;
}

/** The quarantine as the operations use it. */
export interface Quarantine {
  /** Whether `uuid` has kept messages, so that a new one must wait behind them. */
  holds(uuid: string): Promise<boolean>;
  /** Keeps a message: refused with `conflict`, or behind earlier ones when it is undefined. */
  keep(
    operation: "create" | "modify",
    patch: UserPatch,
    conflict: UserConflictError | undefined,
  ): Promise<void>;
  /** Discards the kept messages of a deleted user. */
  discard(uuid: string): Promise<void>;
  /** Retries every kept message after a successful write; never rejects. */
  afterWrite(): Promise<void>;
  retry(): Promise<QuarantineRetry>;
  list(): Promise<QuarantinedMessage[]>;
  stats(): QuarantineStats;
}

export interface QuarantineOptions {
  store: UserStore;
  lanes: KeyedLock;
  logger: Logger;
  onChange: ((change: ProvisioningChange) => void | Promise<void>) | undefined;
  onQuarantine: ((event: QuarantineEvent) => void | Promise<void>) | undefined;
  /** Reports a failure that changes no answer (a hook's, a background retry's). */
  report(error: unknown, context: ProvisioningErrorContext, patch?: UserPatch): void;
}

const quarantineMethodNames = [
  "keepQuarantined",
  "listQuarantined",
  "releaseQuarantined",
  "discardQuarantined",
] as const;

/** The store's quarantine methods, or a TypeError that names those it lacks. */
export function quarantineMethodsOf(store: UserStore): QuarantineMethods {
  const missing = quarantineMethodNames.filter((name) => typeof store[name] !== "function");
  if (missing.length > 0) {
    throw new TypeError(
      `quarantine is true but the store has no ${missing.join(", ")}: the kept messages live in the store (MemoryUserStore, SqliteUserStore and PostgresUserStore have them; testUserStore checks yours), or leave quarantine off`,
    );
  }
  return store as UserStore & QuarantineMethods;
}

/** The text that says why a message waits behind another. */
export const behindReason = "an earlier message of this user is kept in the quarantine";

export function createQuarantine(options: QuarantineOptions): Quarantine {
  const { lanes, logger, onChange, onQuarantine, report } = options;
  const store = quarantineMethodsOf(options.store);
  const counts = { kept: 0, released: 0, discarded: 0, waiting: 0 };
  const instruments = lazyInstruments((api: OpenTelemetryApi) =>
    scopeOf(api).meter.createCounter("platform_integration.provisioning.quarantine", {
      description:
        "Provisioning messages kept in the quarantine, released from it or discarded, by event.",
      unit: "{message}",
    }),
  );

  async function tell(type: QuarantineEvent["type"], entry: QuarantinedEntry) {
    counts[type]++;
    instruments()?.add(1, { "platform_integration.quarantine.event": type });
    if (onQuarantine === undefined) return;
    const message = shown(entry);
    try {
      await onQuarantine({ type, message });
    } catch (error) {
      report(error, { operation: entry.operation, uuid: entry.uuid, status: 500 }, entry.patch);
    }
  }

  async function keep(
    operation: "create" | "modify",
    patch: UserPatch,
    conflict: UserConflictError | undefined,
  ): Promise<void> {
    const reason =
      conflict === undefined ? behindReason : withoutPassword(conflict.message, patch.password);
    const entry: QuarantineEntry = {
      uuid: patch.uuid,
      operation,
      patch,
      reason,
      ...(conflict?.field === undefined ? {} : { field: conflict.field }),
    };
    const kept = await store.keepQuarantined(entry);
    counts.waiting++;
    logger.warn(
      `platform-integration: kept the ${operation} of user ${JSON.stringify(patch.uuid)} in the quarantine and answered success, so that the directory keeps flowing: ${reason}. It applies by itself once the conflict is gone (after any later write, or handler.retryQuarantined()); handler.quarantined() lists what is kept.`,
      {
        operation,
        uuid: patch.uuid,
        reason,
        ...(entry.field === undefined ? {} : { field: entry.field }),
      },
    );
    await tell("kept", kept);
  }

  async function holds(uuid: string): Promise<boolean> {
    return (await store.listQuarantined({ uuid })).length > 0;
  }

  async function discard(uuid: string): Promise<void> {
    const entries = await store.listQuarantined({ uuid });
    if (entries.length === 0) return;
    await store.discardQuarantined(uuid);
    counts.waiting = Math.max(0, counts.waiting - entries.length);
    for (const entry of entries) await tell("discarded", entry);
  }

  /** Releases the kept messages of one uuid, in its turn; resolves how many applied. */
  async function releaseUser(uuid: string): Promise<number> {
    const turn = lanes.acquire(uuid);
    if (turn !== undefined) await turn;
    try {
      const outcome = await store.releaseQuarantined(uuid);
      if (outcome.outcome !== "released") return 0;
      const { entries, result } = outcome;
      counts.waiting = Math.max(0, counts.waiting - entries.length);
      for (const entry of entries) await tell("released", entry);
      if (onChange !== undefined) {
        try {
          await onChange({ type: result.created ? "created" : "updated", uuid, user: result.user });
        } catch (error) {
          // Stored: no message will bring this change again, so the failure is reported here.
          const operation = entries[0]?.operation ?? "modify";
          report(
            error,
            { operation, uuid, status: 500 },
            composePatches(entries.map((entry) => entry.patch)),
          );
        }
      }
      return entries.length;
    } finally {
      lanes.release(uuid);
    }
  }

  /** Passes over every kept uuid, oldest first, until a pass releases nothing. */
  async function pass(): Promise<QuarantineRetry> {
    let released = 0;
    for (;;) {
      const entries = await store.listQuarantined();
      counts.waiting = entries.length;
      const uuids = [...new Set(entries.map((entry) => entry.uuid))];
      let releasedNow = 0;
      for (const uuid of uuids) releasedNow += await releaseUser(uuid);
      released += releasedNow;
      if (releasedNow === 0) return { released, kept: entries.length };
    }
  }

  // One pass at a time; a write during a pass asks for one more, which the running one makes.
  let running: Promise<QuarantineRetry> | undefined;
  let again = false;
  function retry(): Promise<QuarantineRetry> {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        let result: QuarantineRetry;
        do {
          again = false;
          result = await pass();
          total += result.released;
        } while (again);
        return { released: total, kept: result.kept };
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  async function afterWrite(): Promise<void> {
    try {
      await retry();
    } catch (error) {
      // The write that triggered this pass is stored and answered; the kept messages stay.
      report(error, { operation: "modify", uuid: undefined, status: 503 });
    }
  }

  async function list(): Promise<QuarantinedMessage[]> {
    const entries = await store.listQuarantined();
    counts.waiting = entries.length;
    return entries.map(shown);
  }

  return { holds, keep, discard, afterWrite, retry, list, stats: () => ({ ...counts }) };
}

/** A kept entry as it may leave the handler: without the password, in its text or its fields. */
function shown(entry: QuarantinedEntry): QuarantinedMessage {
  const { password, ...user } = entry.patch;
  return {
    id: entry.id,
    uuid: entry.uuid,
    operation: entry.operation,
    user,
    reason: withoutPassword(entry.reason, password),
    ...(entry.field === undefined ? {} : { field: entry.field }),
    since: entry.since,
    attempts: entry.attempts,
  };
}

function withoutPassword(text: string, password: string | null | undefined): string {
  return typeof password === "string" && password !== ""
    ? text.replaceAll(password, "[redacted]")
    : text;
}

/**
 * Without the quarantine, a conflict answers 503 like any store failure, and the platform sends
 * the message again for ever; this says once per user and field that the option would keep the
 * directory flowing. It remembers a bounded number of them.
 */
export function createConflictHint(
  logger: Logger,
): (uuid: string, conflict: UserConflictError) => void {
  const told = new Set<string>();
  return (uuid, conflict) => {
    const key = `${uuid}\u0000${conflict.field ?? ""}`;
    if (told.has(key)) return;
    if (told.size >= 10_000) told.clear();
    told.add(key);
    const field = conflict.field === undefined ? "a value" : `its ${conflict.field}`;
    logger.warn(
      `platform-integration: the store refused user ${JSON.stringify(uuid)} for good (${field} conflicts with another user): the platform will send this message again and the directory stays paused behind it until the conflict is resolved. The handler's quarantine option would keep the message, answer success and apply it once the conflict is gone, so that the directory keeps flowing.`,
      { uuid, ...(conflict.field === undefined ? {} : { field: conflict.field }) },
    );
  };
}
