// What one cycle counts while it runs (the figures its progress callbacks see, the entries it
// skipped, the accounts the directory left out, how it read the directory) and the report it
// ends with.
import type { SyncStop } from "../platform/messages.ts";
import type {
  DeleteGuardStop,
  DirectoryRead,
  DirectorySyncProgress,
  DirectorySyncReport,
  SyncMode,
} from "./directory-sync-types.ts";
import type { SkippedEntry } from "./source.ts";

const maxSkippedListed = 100;

/** How a cycle ended, for its report: at most one of the three. */
export interface CycleOutcome {
  stoppedAt?: SyncStop;
  directoryError?: string;
  deleteGuard?: DeleteGuardStop;
}

/** One cycle's counts, filled in by the plan and by each acknowledgement. */
export interface CycleTally {
  /** The counts the progress callback sees; the plan and the acknowledgements add to them. */
  readonly progress: DirectorySyncProgress;
  /** How the directory was read; `full` unless the plan read only the changes. */
  read: DirectoryRead;
  readNote: string | undefined;
  /** Counts entries no message can carry, listing the first 100. */
  skip(entries: SkippedEntry[]): void;
  /** Adds the disabled accounts and the non-user entries a read reports. */
  countAccounts(counts: { disabled?: number; nonUsers?: number }): void;
  /** Calls the sync's `onProgress` with a copy of the counts. */
  notify(): void;
  report(
    outcome: CycleOutcome,
    cycle: {
      completed: boolean;
      /** The refusals still held, and the first of them. */
      refused: number;
      refusals: SyncStop[];
      /** How many users the application holds, asked only for a completed partial read. */
      held: () => number;
    },
  ): DirectorySyncReport;
}

/** The counts of a cycle starting now (its duration is measured from here). */
export function createCycleTally(
  mode: SyncMode,
  onProgress: ((progress: DirectorySyncProgress) => void) | undefined,
): CycleTally {
  const startedAt = performance.now();
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
  const tally: CycleTally = {
    progress,
    read: "full",
    readNote: undefined,
    skip(entries) {
      skipped += entries.length;
      skippedEntries.push(...entries.slice(0, maxSkippedListed - skippedEntries.length));
    },
    countAccounts(counts) {
      for (const name of ["disabled", "nonUsers"] as const) {
        const count = counts[name];
        if (count !== undefined) accounts[name] = (accounts[name] ?? 0) + count;
      }
    },
    notify() {
      onProgress?.({ ...progress });
    },
    report(outcome, { completed, refused, refusals, held }) {
      const { read: _read, total: _total, ...counts } = progress;
      if (tally.read !== "full" && completed) {
        // Every user the application holds that needed no message, not only those the server sent.
        counts.unchanged = held() - counts.created - counts.modified;
      }
      return {
        completed,
        read: tally.read,
        ...(tally.readNote !== undefined && { readNote: tally.readNote }),
        ...counts,
        skipped,
        skippedEntries,
        ...accounts,
        refused,
        refusals,
        failed:
          refused + (outcome.stoppedAt || outcome.directoryError || outcome.deleteGuard ? 1 : 0),
        ...outcome,
        durationMs: Math.round(performance.now() - startedAt),
      };
    },
  };
  return tally;
}
