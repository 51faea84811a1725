// The directory sync's cycle: what to send (the directory diffed against the acknowledged
// state, or the Content Sync changes since the last completed cycle), in which order (deletes,
// then the directory's order, refused users' messages held and retried, username swaps staged),
// and what the report says. The delivery is the platform's engine's (src/platform), the delete
// guard delete-guard.ts's, which answers refuse a user refusal.ts's.
import { setTimeout as sleep } from "node:timers/promises";
import { pemCertificates } from "../internal/pem.ts";
import { createDeliveryEngine } from "../platform/delivery-engine.ts";
import {
  changedFields,
  type OutgoingMessage,
  type SyncStop,
  TargetError,
} from "../platform/messages.ts";
import { connectOverNodeHttp } from "../platform/node-http-client.ts";
import { connectProvisioning } from "../platform/provisioning-api-client.ts";
import { verifyUsers } from "../platform/verify-users.ts";
import { toWireUser } from "../platform/wire-user.ts";
import type { UserRecord } from "../provisioning/user-record.ts";
import { type AcknowledgedState, openState, type WireRecord } from "./acknowledged-state.ts";
import { checkDeleteGuard, DeleteGuardError } from "./delete-guard.ts";
import type {
  DeleteGuardStop,
  DirectoryRead,
  DirectorySync,
  DirectorySyncProgress,
  DirectorySyncReport,
  SyncMode,
  SyncTargetOptions,
} from "./directory-sync-types.ts";
import { isRefusal, stagingUsername } from "./refusal.ts";
import {
  type DirectoryChanges,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
  type SkippedEntry,
} from "./source.ts";

const maxSkippedListed = 100;
const maxRefusalsListed = 100;

/**
 * A sync from any {@link DirectorySource}: each cycle compares the directory with the records
 * the application acknowledged (the acknowledged state, in a SQLite file) and sends the difference through
 * the platform's delivery engine.
 */
export function createSourceSync(
  options: SyncTargetOptions & { source: DirectorySource; adoptState?: boolean },
): DirectorySync {
  const { source } = options;
  const target =
    typeof options.target === "string" || options.target instanceof URL
      ? String(options.target)
      : "in-process";
  const timeoutMs = options.timeoutMs ?? 30_000;
  // Options are checked before the state file is opened, so that a bad one leaves it unlocked.
  const ca = pemCertificates(options.targetTls?.ca, "targetTls.ca");
  const http =
    typeof options.target === "string" || options.target instanceof URL
      ? connectOverNodeHttp(options.target, { timeoutMs, ca })
      : undefined;
  if (http === undefined && ca.length > 0) {
    throw new TypeError("targetTls.ca is for an https:// target, not a handler called in-process");
  }
  const state = openState(
    options.state,
    { source: source.identity, target },
    { adopt: options.adoptState ?? false },
  );
  const client = http ?? connectProvisioning(options.target, { timeoutMs });
  const engine = createDeliveryEngine(options.wrapClient?.(client) ?? client);
  // The attempt count of the message a cycle stopped at, carried into the next cycle.
  let lastStop: { key: string; attempts: number } | undefined;
  // The attempt counts of the messages the last cycle held.
  const lastRefused = new Map<string, number>();
  let running = false;
  let closed = false;

  const syncOnce = async ({ signal }: { signal?: AbortSignal } = {}) => {
    if (running) throw new Error("A cycle is running: cycles run one at a time");
    running = true;
    try {
      return await runCycle(state, source, signal);
    } finally {
      running = false;
    }
  };

  const runCycle = async (
    acknowledged: AcknowledgedState,
    directory: DirectorySource,
    signal?: AbortSignal,
  ): Promise<DirectorySyncReport> => {
    const startedAt = performance.now();
    const mode: SyncMode = acknowledged.resyncRequested
      ? "full"
      : acknowledged.count() === 0
        ? "initial"
        : "update";
    const progress: DirectorySyncProgress = {
      mode,
      read: 0,
      created: 0,
      modified: 0,
      deleted: 0,
      unchanged: 0,
    };
    const skippedEntries: SkippedEntry[] = [];
    let skipped = 0;
    const accounts: { disabled?: number; nonUsers?: number } = {};
    const countAccounts = (counts: { disabled?: number; nonUsers?: number }) => {
      for (const name of ["disabled", "nonUsers"] as const) {
        const count = counts[name];
        if (count !== undefined) accounts[name] = (accounts[name] ?? 0) + count;
      }
    };
    let read: DirectoryRead = "full";
    let readNote: string | undefined;
    // The Content Sync cookie to keep if every message of this cycle is acknowledged.
    let nextChangeCookie: string | undefined;
    const resume = <M extends Omit<OutgoingMessage, "attempts">>(
      message: M,
    ): M & { attempts: number } => {
      const key = keyOf(message);
      const attempts =
        "attempts" in message
          ? (message.attempts as number)
          : lastStop?.key === key
            ? lastStop.attempts
            : (lastRefused.get(key) ?? 0);
      return { ...message, attempts };
    };

    // A create or modify carries the whole record the application will hold once it is acknowledged;
    // a staging rename (a username swap) carries the temporary username instead.
    type Planned = OutgoingMessage & { record?: WireRecord; staging?: string };
    // The messages the application refused in this cycle, by uuid, in the order they came: each
    // user's own, held (unacknowledged: the next cycle's diff sends it again, and no Content Sync
    // cookie is kept past it) while the cycle goes on with the other users.
    const refused = new Map<string, { message: Planned; stop: SyncStop }>();
    let refusedTotal = 0;
    // Set when a message waited behind a refused one of its user's: the cycle is not complete.
    let deferred = false;
    const refusals: SyncStop[] = [];
    const messageFor = (user: UserRecord): Planned | undefined => {
      const now = toWireUser(user);
      const before = acknowledged.get(user.uuid);
      let message: Planned;
      if (before === undefined || before === null) {
        message = resume({ kind: "create", uuid: user.uuid, body: now });
      } else {
        const changed = changedFields(before, acknowledged.protect(now, before));
        if (changed === undefined) {
          // An earlier version's password digest, rewritten without a message: unchanged.
          if (acknowledged.outdated(before)) acknowledged.acknowledge(now);
          progress.unchanged++;
          return undefined;
        }
        // The digest told that the password changed; the message carries the password.
        const body = Object.fromEntries(
          Object.keys(changed).map((name) => [name, Object.hasOwn(now, name) ? now[name] : null]),
        ) as WireRecord;
        message = resume({ kind: "modify", uuid: user.uuid, body });
      }
      message.record = now;
      return message;
    };
    const skip = (entries: SkippedEntry[]) => {
      skipped += entries.length;
      skippedEntries.push(...entries.slice(0, maxSkippedListed - skippedEntries.length));
    };
    const guardDeletes = (deletes: number) =>
      checkDeleteGuard(deletes, () => acknowledged.count(), options);

    /** Deletes for the acknowledged users the scan did not see, once the guard lets them. */
    function* deletesForUnseen(alsoDeleted = 0): Generator<Planned> {
      guardDeletes(acknowledged.unseenCount() + alsoDeleted);
      for (const uuid of acknowledged.unseen()) yield resume({ kind: "delete", uuid });
    }

    /** An update cycle from the changes since the Content Sync cookie: deletes first, then the changed. */
    function* planChanges(changes: DirectoryChanges): Generator<Planned> {
      const deleted = [...new Set(changes.deleted)].filter(
        (uuid) => acknowledged.get(uuid) !== undefined,
      );
      if (changes.present) {
        acknowledged.beginScan();
        acknowledged.markSeen(changes.present);
        acknowledged.markSeen(changes.changed.map((user) => user.uuid));
        // A user both deleted and not present counts once.
        acknowledged.markSeen(deleted);
        yield* deletesForUnseen(deleted.length);
      } else guardDeletes(deleted.length);
      for (const uuid of deleted) yield resume({ kind: "delete", uuid });
      skip(changes.skipped);
      countAccounts(changes);
      progress.read = changes.changed.length + changes.skipped.length;
      options.onProgress?.({ ...progress });
      for (const user of changes.changed) {
        const message = messageFor(user);
        if (message) yield message;
      }
    }

    async function* plan(): AsyncGenerator<Planned> {
      const feed = directory.changes;
      const kept = acknowledged.changeCookie;
      if (mode === "update" && feed && kept?.scope === feed.scope) {
        const changes = await feed.changesSince(kept.cookie, { signal });
        if ("note" in changes) readNote = changes.note;
        else {
          read = changes.read ?? "content-sync";
          nextChangeCookie = changes.cookie;
          yield* planChanges(changes);
          return;
        }
      }
      if (feed) {
        acknowledged.changeCookie = undefined;
        // The Content Sync cookie of a full read is taken before it, so that it covers what the read sees. It
        // costs a read of every entry's uuid (a fifth of a 100,000-user initial sync), so only an
        // update cycle takes one: the initial sync and a full re-sync send their first message at
        // once, and the update cycle after them reads the whole directory once more for it.
        if (mode === "update") {
          const now = await feed.cookieNow({ signal });
          if ("cookie" in now) nextChangeCookie = now.cookie;
          else if (now.note !== undefined) readNote ??= now.note;
        }
      }
      if (acknowledged.resyncRequested) {
        if (options.resetRequest) yield resume({ kind: "reset" });
        else acknowledged.forgetContents();
      }
      if (acknowledged.count() > 0) {
        acknowledged.beginScan();
        let total = 0;
        for await (const page of directory.read({ uuidsOnly: true, signal })) {
          acknowledged.markSeen(page.users.map((user) => user.uuid));
          total += page.users.length;
        }
        progress.total = total;
        yield* deletesForUnseen();
      }
      for await (const page of directory.read({ uuidsOnly: false, signal })) {
        skip(page.skipped);
        countAccounts(page);
        progress.read += page.users.length + page.skipped.length;
        options.onProgress?.({ ...progress });
        for (const user of page.users) {
          const message = messageFor(user);
          if (message) yield message;
        }
      }
    }

    /** The messages for a user after one of theirs was refused in this cycle wait behind it. */
    async function* holdingOrder(messages: AsyncIterable<Planned>): AsyncGenerator<Planned> {
      for await (const message of messages) {
        const uuid = message.uuid;
        if (uuid !== undefined && refused.has(uuid)) {
          // Left for the next cycle's diff, which no Content Sync cookie of this cycle may pass.
          deferred = true;
          continue;
        }
        yield message;
      }
      yield* retryRefused();
    }

    /**
     * Sends the refused messages again once every other was sent: a user renamed later in the
     * directory's order may have freed the username one was refused for. Passes repeat while one
     * is accepted; then a username swap (or rotation), which no order can serve, is staged: one of
     * its users is renamed to {@link stagingUsername} for a moment, which frees the name.
     */
    async function* retryRefused(): AsyncGenerator<Planned> {
      // Each staging takes one user off a username for good: at most one per refused message.
      for (let stagings = refused.size; ; stagings--) {
        let accepted = true;
        while (accepted) {
          accepted = false;
          for (const [uuid, { message, stop }] of [...refused]) {
            // Only a conflict (409) may be undone by another user's message of this cycle.
            if (stop.status !== 409) continue;
            refused.delete(uuid);
            yield resume(message);
            if (!refused.has(uuid)) accepted = true;
          }
        }
        const staging = stagings > 0 ? nextStaging() : undefined;
        if (staging === undefined) return;
        yield staging;
        if (acknowledged.get(staging.uuid as string)?.username !== staging.staging) return;
      }
    }

    /** A rename to a temporary username that unties a swap among the refused, if there is one. */
    const nextStaging = (): Planned | undefined => {
      for (const [uuid, { message, stop }] of refused) {
        const wanted = message.record?.username;
        if (stop.status !== 409) continue;
        if (typeof wanted !== "string") continue;
        const holder = acknowledged.holderOf(wanted, uuid);
        const held = holder === undefined ? undefined : refused.get(holder);
        // The holder is refused too, and its own message takes it off that username.
        if (holder === undefined || held?.stop.status !== 409) continue;
        if (held.message.record?.username === wanted) continue;
        const temporary = stagingUsername(holder);
        return {
          kind: "modify",
          uuid: holder,
          body: { uuid: holder, username: temporary },
          attempts: 0,
          staging: temporary,
        };
      }
      return undefined;
    };

    const acknowledge = (message: Planned) => {
      if (message.staging !== undefined) {
        acknowledged.rename(message.uuid as string, message.staging);
        return;
      }
      refused.delete(message.uuid as string);
      if (message.kind === "reset") acknowledged.forgetContents();
      else if (message.kind === "delete") {
        acknowledged.forget(message.uuid as string);
        progress.deleted++;
      } else {
        acknowledged.acknowledge(message.record as WireRecord);
        progress[message.kind === "create" ? "created" : "modified"]++;
      }
      options.onProgress?.({ ...progress });
    };

    const refuse = (message: Planned, stop: SyncStop) => {
      if (!isRefusal(message, stop)) return false;
      // A staging rename refused leaves the swap as it was: its users' own messages stay held.
      if (message.staging !== undefined) return true;
      refused.set(message.uuid as string, { message, stop });
      return true;
    };

    const report = (
      outcome: { stoppedAt?: SyncStop; directoryError?: string; deleteGuard?: DeleteGuardStop },
      completed: boolean,
    ): DirectorySyncReport => {
      const { read: _read, total: _total, ...counts } = progress;
      if (read !== "full" && completed) {
        // Every user the application holds that needed no message, not only those the server sent.
        counts.unchanged = acknowledged.count() - counts.created - counts.modified;
      }
      return {
        completed,
        read,
        ...(readNote !== undefined && { readNote }),
        ...counts,
        skipped,
        skippedEntries,
        ...accounts,
        refused: refusedTotal,
        refusals,
        failed:
          refusedTotal +
          (outcome.stoppedAt || outcome.directoryError || outcome.deleteGuard ? 1 : 0),
        ...outcome,
        durationMs: Math.round(performance.now() - startedAt),
      };
    };

    /** The refusals still held when the cycle ended, for the report. */
    const countRefusals = () => {
      refusedTotal = refused.size;
      for (const { stop } of refused.values()) {
        if (refusals.length < maxRefusalsListed) refusals.push(stop);
      }
    };

    try {
      const outcome = await engine.runCycle(holdingOrder(plan()), {
        signal,
        acknowledge,
        refuse,
      });
      if (outcome.stoppedAt?.fatal) {
        throw new TargetError(`The Provisioning API at ${target}: ${outcome.stoppedAt.error}`);
      }
      countRefusals();
      // Every message acknowledged, none held: the application and the directory agree. A
      // Content Sync cookie is kept only then, so that a held message is read again.
      const completed = outcome.completed && refused.size === 0 && !deferred;
      const scope = directory.changes?.scope;
      if (completed && nextChangeCookie !== undefined && scope !== undefined) {
        acknowledged.changeCookie = { scope, cookie: nextChangeCookie };
      }
      lastStop = outcome.stoppedAt && {
        key: keyOf(outcome.stoppedAt.message),
        attempts: outcome.stoppedAt.attempt,
      };
      lastRefused.clear();
      for (const { message, stop } of refused.values()) {
        lastRefused.set(keyOf(message), stop.attempt);
      }
      return report(outcome.stoppedAt ? { stoppedAt: outcome.stoppedAt } : {}, completed);
    } catch (error) {
      if (error instanceof TargetError || (error instanceof DirectoryError && error.fatal)) {
        throw error;
      }
      countRefusals();
      if (error instanceof DeleteGuardError) return report({ deleteGuard: error.stop }, false);
      const message = error instanceof Error ? error.message : String(error);
      return report({ directoryError: message }, false);
    }
  };

  return {
    syncOnce,
    async run({ intervalMs, signal, onCycle }) {
      while (!signal?.aborted) {
        onCycle?.(await syncOnce(signal ? { signal } : {}));
        await sleep(intervalMs, undefined, signal ? { signal } : {}).catch(() => undefined);
      }
    },
    requestResync() {
      state.resyncRequested = true;
    },
    verify: (readUser, { signal } = {}) =>
      verifyUsers(readUser, {
        present: usersOf(source.read({ uuidsOnly: false })),
        signal,
      }),
    async close() {
      // A second close (a test's cleanup after the test's own, a signal handler racing the end
      // of run) must not close the state file's descriptors again.
      if (closed) return;
      closed = true;
      http?.close();
      state.close();
      await source.close?.();
    },
  };
}

function keyOf(message: { kind: string; uuid?: string }): string {
  return `${message.kind} ${message.uuid ?? ""}`;
}

async function* usersOf(pages: AsyncIterable<DirectoryPage>): AsyncGenerator<UserRecord> {
  for await (const page of pages) yield* page.users;
}
