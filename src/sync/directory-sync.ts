import { setTimeout as sleep } from "node:timers/promises";
import { pemCertificates } from "../internal/pem.ts";
import type { UserRecord } from "../provisioning/user-record.ts";
import { connectProvisioning } from "../testing/provisioning-target.ts";
import { verifyUsers } from "../testing/verify-users.ts";
import { type AcknowledgedState, openState, type WireRecord } from "./acknowledged-state.ts";
import type {
  DirectoryRead,
  DirectorySync,
  DirectorySyncProgress,
  DirectorySyncReport,
  SyncMode,
  SyncTargetOptions,
} from "./directory-sync-types.ts";
import { createDeliveryEngine } from "./engine.ts";
import {
  changedFields,
  type OutgoingMessage,
  type SyncStop,
  TargetError,
  toWire,
} from "./messages.ts";
import { connectOverNodeHttp } from "./node-http-client.ts";
import {
  type DirectoryChanges,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
  type SkippedEntry,
} from "./source.ts";

const maxSkippedListed = 100;

/**
 * A sync from any {@link DirectorySource}: each cycle compares the directory with the records
 * the application acknowledged (the cookie, in a SQLite file) and sends the difference through
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
  const engine = createDeliveryEngine(http ?? connectProvisioning(options.target, { timeoutMs }));
  // The attempt count of the message a cycle stopped at, carried into the next cycle.
  let lastStop: { key: string; attempts: number } | undefined;
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
    cookie: AcknowledgedState,
    directory: DirectorySource,
    signal?: AbortSignal,
  ): Promise<DirectorySyncReport> => {
    const startedAt = performance.now();
    const mode: SyncMode = cookie.resyncRequested
      ? "full"
      : cookie.count() === 0
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
    // The cookie to keep if every message of this cycle is acknowledged.
    let nextCookie: string | undefined;
    const resume = (message: Omit<OutgoingMessage, "attempts">): OutgoingMessage => {
      const attempts = lastStop?.key === keyOf(message) ? lastStop.attempts : 0;
      return { ...message, attempts };
    };

    // A create or modify carries the whole record the application will hold once it is acknowledged.
    type Planned = OutgoingMessage & { record?: WireRecord };
    const messageFor = (user: UserRecord): Planned | undefined => {
      const now = toWire(user);
      const before = cookie.get(user.uuid);
      let message: Planned;
      if (before === undefined || before === null) {
        message = resume({ kind: "create", uuid: user.uuid, body: now });
      } else {
        const changed = changedFields(before, cookie.protect(now));
        if (changed === undefined) {
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
    /** Deletes for the acknowledged users the scan did not see, unless it saw none at all. */
    function* deletesForUnseen(seen: number): Generator<Planned> {
      if (seen === 0) {
        throw new DirectoryError(
          `The directory returned no users, while the application holds ${cookie.count()}: ` +
            "refusing to delete them all. Check the base DN and the filter.",
          { fatal: false },
        );
      }
      for (const uuid of cookie.unseen()) yield resume({ kind: "delete", uuid });
    }

    /** An update cycle from the changes since the cookie: deletes first, then the changed. */
    function* planChanges(changes: DirectoryChanges): Generator<Planned> {
      if (changes.present) {
        cookie.beginScan();
        cookie.markSeen(changes.present);
        cookie.markSeen(changes.changed.map((user) => user.uuid));
        yield* deletesForUnseen(changes.present.length + changes.changed.length);
      }
      for (const uuid of changes.deleted) {
        if (cookie.get(uuid) !== undefined) yield resume({ kind: "delete", uuid });
      }
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
      const kept = cookie.changeCookie;
      if (mode === "update" && feed && kept?.scope === feed.scope) {
        const changes = await feed.changesSince(kept.cookie, { signal });
        if ("note" in changes) readNote = changes.note;
        else {
          read = changes.read ?? "content-sync";
          nextCookie = changes.cookie;
          yield* planChanges(changes);
          return;
        }
      }
      if (feed) {
        cookie.changeCookie = undefined;
        // The cookie of a full read is taken before it, so that it covers what the read sees. It
        // costs a read of every entry's uuid (a fifth of a 100,000-user initial sync), so only an
        // update cycle takes one: the initial sync and a full re-sync send their first message at
        // once, and the update cycle after them reads the whole directory once more for it.
        if (mode === "update") {
          const now = await feed.cookieNow({ signal });
          if ("cookie" in now) nextCookie = now.cookie;
          else if (now.note !== undefined) readNote ??= now.note;
        }
      }
      if (cookie.resyncRequested) {
        if (options.resetRequest) yield resume({ kind: "reset" });
        else cookie.forgetContents();
      }
      if (cookie.count() > 0) {
        cookie.beginScan();
        let total = 0;
        for await (const page of directory.read({ uuidsOnly: true, signal })) {
          cookie.markSeen(page.users.map((user) => user.uuid));
          total += page.users.length;
        }
        progress.total = total;
        yield* deletesForUnseen(total);
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

    const acknowledge = (message: OutgoingMessage & { record?: WireRecord }) => {
      if (message.kind === "reset") cookie.forgetContents();
      else if (message.kind === "delete") {
        cookie.forget(message.uuid as string);
        progress.deleted++;
      } else {
        cookie.acknowledge(message.record as WireRecord);
        progress[message.kind === "create" ? "created" : "modified"]++;
      }
      options.onProgress?.({ ...progress });
    };

    const report = (
      outcome: { stoppedAt?: SyncStop; directoryError?: string },
      completed: boolean,
    ): DirectorySyncReport => {
      const { read: _read, total: _total, ...counts } = progress;
      if (read !== "full" && completed) {
        // Every user the application holds that needed no message, not only those the server sent.
        counts.unchanged = cookie.count() - counts.created - counts.modified;
      }
      return {
        completed,
        read,
        ...(readNote !== undefined && { readNote }),
        ...counts,
        skipped,
        skippedEntries,
        ...accounts,
        failed: completed ? 0 : 1,
        ...outcome,
        durationMs: Math.round(performance.now() - startedAt),
      };
    };

    try {
      const outcome = await engine.runCycle(plan(), { signal, acknowledge });
      if (outcome.stoppedAt?.fatal) {
        throw new TargetError(`The Provisioning API at ${target}: ${outcome.stoppedAt.error}`);
      }
      const scope = directory.changes?.scope;
      if (outcome.completed && nextCookie !== undefined && scope !== undefined) {
        cookie.changeCookie = { scope, cookie: nextCookie };
      }
      lastStop = outcome.stoppedAt && {
        key: keyOf(outcome.stoppedAt.message),
        attempts: outcome.stoppedAt.attempt,
      };
      return report(outcome.stoppedAt ? { stoppedAt: outcome.stoppedAt } : {}, outcome.completed);
    } catch (error) {
      if (error instanceof TargetError || (error instanceof DirectoryError && error.fatal)) {
        throw error;
      }
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
    injectFault: (fault) => engine.injectFault(fault),
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
