// The directory sync: its options checked and wired (the state file, the Provisioning API client,
// the platform's delivery engine), and each cycle composed of its parts: the plan of what to send
// (cycle-plan.ts), the hold of refused users (refusal.ts), the counts and report
// (cycle-tally.ts), the attempts carried between cycles (attempt-memory.ts). This module owns what
// an acknowledgement changes and when a Content Sync cookie is kept.
import { setTimeout as sleep } from "node:timers/promises";
import { pemCertificates } from "../internal/pem.ts";
import { redactUrl } from "../internal/url.ts";
import { createDeliveryEngine } from "../platform/delivery-engine.ts";
import { TargetError } from "../platform/messages.ts";
import { connectOverNodeHttp } from "../platform/node-http-client.ts";
import { connectProvisioning } from "../platform/provisioning-api-client.ts";
import { verifyUsers } from "../platform/verify-users.ts";
import type { UserRecord } from "../users/user-record.ts";
import {
  type AcknowledgedState,
  openState,
  StateFileError,
  type WireRecord,
} from "./acknowledged-state.ts";
import { createAttemptMemory } from "./attempt-memory.ts";
import { type PlannedMessage, planCycle } from "./cycle-plan.ts";
import { type CycleOutcome, createCycleTally } from "./cycle-tally.ts";
import { createDeleteGuard, DeleteGuardError } from "./delete-guard.ts";
import type {
  DirectorySync,
  DirectorySyncReport,
  SyncMode,
  SyncTargetOptions,
} from "./directory-sync-types.ts";
import { holdRefusals } from "./refusal.ts";
import { DirectoryError, type DirectoryPage, type DirectorySource } from "./source.ts";

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
  // The guard's options are checked before the state file is opened; it reads the state on use.
  const guard = createDeleteGuard(options, {
    read: () => state.deleteWindow,
    write: (value) => {
      state.deleteWindow = value;
    },
  });
  const state = openState(
    options.state,
    { source: source.identity, target },
    { adopt: options.adoptState ?? false },
  );
  const client = http ?? connectProvisioning(options.target, { timeoutMs });
  const engine = createDeliveryEngine(options.wrapClient?.(client) ?? client);
  const attempts = createAttemptMemory();
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
    const mode: SyncMode = acknowledged.resyncRequested
      ? "full"
      : acknowledged.count() === 0
        ? "initial"
        : "update";
    const tally = createCycleTally(mode, options.onProgress);
    const { resume } = attempts;
    guard.beginCycle();
    const plan = planCycle({
      acknowledged,
      directory,
      mode,
      tally,
      resume,
      options,
      guard,
      signal,
    });
    const refusals = holdRefusals(acknowledged, resume);
    const ended = (outcome: CycleOutcome, completed: boolean) => {
      const report = tally.report(outcome, {
        completed,
        ...refusals.summary(),
        held: () => acknowledged.count(),
      });
      return guard.allowed === undefined ? report : { ...report, allowed: guard.allowed };
    };

    const acknowledge = (message: PlannedMessage) => {
      if (message.staging !== undefined) {
        acknowledged.rename(message.uuid as string, message.staging);
        return;
      }
      refusals.release(message.uuid as string);
      if (message.kind === "reset") {
        // The users the read did not return are gone for good, in the same transaction that
        // marks the others to be created again: the report counts them as deleted.
        const removes = message.removes ?? 0;
        acknowledged.forgetContents({ reset: true });
        tally.progress.deleted += removes;
        guard.deleted(removes, "all");
      } else if (message.kind === "delete") {
        acknowledged.forget(message.uuid as string);
        tally.progress.deleted++;
        guard.deleted(1, message.uuid as string);
      } else {
        acknowledged.acknowledge(message.record as WireRecord);
        tally.progress[message.kind === "create" ? "created" : "modified"]++;
      }
      tally.notify();
    };

    try {
      const outcome = await engine.runCycle(refusals.order(plan.messages), {
        signal,
        acknowledge,
        refuse: refusals.refuse,
      });
      if (outcome.stoppedAt?.fatal) {
        throw new TargetError(
          `The Provisioning API at ${redactUrl(target)}: ${outcome.stoppedAt.error}`,
        );
      }
      // Every message acknowledged, none held: the application and the directory agree. A
      // Content Sync cookie is kept only then, so that a held message is read again.
      const completed = outcome.completed && refusals.settled;
      const scope = directory.changes?.scope;
      if (completed && plan.nextChangeCookie !== undefined && scope !== undefined) {
        acknowledged.changeCookie = { scope, cookie: plan.nextChangeCookie };
      }
      attempts.remember(outcome.stoppedAt, refusals.held());
      return ended(outcome.stoppedAt ? { stoppedAt: outcome.stoppedAt } : {}, completed);
    } catch (error) {
      if (
        error instanceof TargetError ||
        error instanceof StateFileError ||
        (error instanceof DirectoryError && error.fatal)
      ) {
        throw error;
      }
      if (error instanceof DeleteGuardError) return ended({ deleteGuard: error.stop }, false);
      const message = error instanceof Error ? error.message : String(error);
      return ended({ directoryError: message }, false);
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
      try {
        state.close();
      } finally {
        await source.close?.();
      }
    },
  };
}

async function* usersOf(pages: AsyncIterable<DirectoryPage>): AsyncGenerator<UserRecord> {
  for await (const page of pages) yield* page.users;
}
