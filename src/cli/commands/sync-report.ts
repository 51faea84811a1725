// What the sync command prints: the progress line while a cycle runs, and each cycle's report,
// in words (or as JSON, which sync.ts writes); and the rule that a full read that skipped every
// entry is a failed cycle.
import type { SyncStop } from "../../platform/messages.ts";
import type { VerifyReport } from "../../platform/verify-users.ts";
import type {
  DirectorySyncProgress,
  DirectorySyncReport,
} from "../../sync/directory-sync-types.ts";
import type { CommandIo } from "../command.ts";
import { describeVerifyReport } from "../verify-output.ts";

/** The progress line of a run: drawn on each progress, finished at the end of each cycle. */
export interface ProgressLine {
  (progress: DirectorySyncProgress): void;
  finish(): void;
}

/** On a terminal a line redrawn in place; elsewhere a line every 10,000 messages. */
export function throttledProgress(out: CommandIo["stderr"], tty: boolean): ProgressLine {
  let shown = 0;
  let drawn = false;
  const line = (progress: DirectorySyncProgress) => {
    const sent = progress.created + progress.modified + progress.deleted;
    const every = tty ? 100 : 10_000;
    if (Math.floor(sent / every) === Math.floor(shown / every)) return;
    shown = sent;
    const of = progress.total === undefined ? "" : ` of ${progress.total}`;
    const text = `${progress.mode} sync: read ${progress.read}${of}, created ${progress.created}, modified ${progress.modified}, deleted ${progress.deleted}, unchanged ${progress.unchanged}`;
    out.write(tty ? `\r${text}` : `${text}\n`);
    drawn = tty;
  };
  return Object.assign(line, {
    finish() {
      if (drawn) out.write("\n");
      drawn = false;
      shown = 0;
    },
  });
}

/**
 * A full read whose every entry was skipped (a mistyped --username-field, say): nothing can
 * reach the application, which the CLI tells as a failure rather than a completed cycle.
 */
export function skippedEverything(report: DirectorySyncReport): boolean {
  return (
    report.read === "full" &&
    report.skipped > 0 &&
    report.created + report.modified + report.unchanged + report.refused === 0
  );
}

/** A cycle's report as the CLI prints it (exported for its tests). */
export function describeReport(
  report: DirectorySyncReport,
  verified: VerifyReport | undefined,
  io: Pick<CommandIo, "signal">,
): string {
  const seconds = (report.durationMs / 1000).toFixed(2);
  const lines = [
    `${report.mode} sync ${report.completed ? "completed" : "stopped"} in ${seconds} s ` +
      `(${report.read === "content-sync" ? "Content Sync" : "full read"}): ` +
      `${report.created} created, ${report.modified} modified, ${report.deleted} deleted, ` +
      `${report.unchanged} unchanged, ${report.failed} failed`,
  ];
  if (report.readNote !== undefined) lines.push(`Full read: ${report.readNote}.`);
  if (report.disabled !== undefined || report.nonUsers !== undefined) {
    lines.push(
      `Active Directory: ${report.disabled ?? 0} disabled accounts, ${report.nonUsers ?? 0} system accounts left out.`,
    );
  }
  if (report.skipped > 0) {
    lines.push(`${report.skipped} entries skipped, such as:`);
    for (const entry of report.skippedEntries.slice(0, 5)) {
      lines.push(`  ${entry.dn}: ${entry.reason}`);
    }
    if (skippedEverything(report)) {
      lines.push(
        "Every entry the directory returned was skipped: check the mapping (--username-field, --uuid-field) and the filter. The cycle counts as failed (exit 1).",
      );
    }
  }
  const describeStop = (stop: SyncStop) => {
    const what = [stop.message.kind, stop.message.uuid].filter(Boolean).join(" ");
    const answer =
      stop.error ??
      `status ${stop.status}${stop.body === undefined ? "" : ` ${JSON.stringify(stop.body)}`}`;
    return `${what} (attempt ${stop.attempt}): ${answer}`;
  };
  if (report.refused > 0) {
    lines.push(
      `${report.refused} messages refused by the application, held for the next cycle (the others went on):`,
    );
    for (const refusal of report.refusals.slice(0, 20)) lines.push(`  ${describeStop(refusal)}`);
  }
  if (report.deleteGuard) lines.push(report.deleteGuard.message);
  if (report.allowed !== undefined) {
    const left = report.allowed - report.deleted;
    lines.push(
      `The allowance let this cycle delete up to ${report.allowed} users past the delete guard; it deleted ${report.deleted}.` +
        (left > 0
          ? ` The other ${left} stay allowed for the next cycles of this run, those users only.`
          : " The allowance is spent."),
    );
  }
  const stop = report.stoppedAt;
  if (io.signal.aborted) {
    const reason = io.signal.reason instanceof Error ? ` (${io.signal.reason.message})` : "";
    lines.push(
      `Stopped on request${reason}${stop ? ` at ${describeStop(stop)}` : ""}: what was acknowledged is in the state file, and the next run resumes there.`,
    );
  } else {
    if (stop) {
      lines.push(
        `Stopped at ${describeStop(stop)}`,
        "The next cycle starts again with this message.",
      );
    }
    if (report.directoryError)
      lines.push(`The directory could not be read: ${report.directoryError}`);
  }
  return `${lines.join("\n")}\n${verified ? describeVerifyReport(verified) : ""}`;
}
