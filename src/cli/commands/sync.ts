import { existsSync, readFileSync, rmSync } from "node:fs";
import { pemCertificates } from "../../internal/pem.ts";
import { redactUrl } from "../../internal/url.ts";
import type { DisabledAccounts } from "../../ldap/active-directory.ts";
import type { createDirectorySync } from "../../ldap/create-directory-sync.ts";
import type { SyncStop } from "../../platform/messages.ts";
import { connectUserReader } from "../../platform/read-user.ts";
import type { VerifyReport } from "../../platform/verify-users.ts";
import type {
  DirectorySyncProgress,
  DirectorySyncReport,
} from "../../sync/directory-sync-types.ts";
import { integerOption, parseTargetCommandLine } from "../args.ts";
import { type Command, type CommandIo, UsageError } from "../command.ts";
import { describeVerifyReport, verifiedAll } from "../verify-output.ts";

/** Where the bind password comes from when no file is named: never from argv. */
export const bindPasswordVariable = "LDAP_BIND_PASSWORD";

const usage = `Usage: platform-integration sync <url> --ldap-url URL --base-dn DN [options]

Plays the platform's part for real: reads users from an LDAP server or Active Directory and keeps
the Provisioning API at <url> in sync with them. Each cycle pings, then sends deletes, creates and
modifies (changed fields only), one at a time, in order (each answer's effect is listed below).
What the application acknowledged is kept in the state file, committed after each message: a
restart resumes where it stopped.

Arguments:
  <url>                       The Provisioning API's base URL (the release's provisioner setting)

Options:
  --ldap-url <url>            ldap://host:389 or ldaps://host:636 (required)
  --bind-dn <dn>              The account that reads the users (anonymous when absent); its
                              password comes from --bind-password-file or $${bindPasswordVariable}
  --bind-password-file <file> A file holding the bind password (a trailing newline is ignored)
  --base-dn <dn>              Where the users are (required)
  --filter <filter>           Which entries are users (default (objectClass=person); on Active
                              Directory, person user accounts without the system accounts)
  --username-field <attr>     The attribute of the username: uid (default), sAMAccountName on AD
  --disabled-accounts <what>  A disabled Active Directory account: keep (default: no message, the
                              application keeps what it holds), sync (as any user) or delete
  --user-id-field <attr>      The attribute sent as user_id (none by default)
  --uuid-field <attr>         The attribute of the uuid (default objectGUID, else entryUUID);
                              objectGUID and objectSid are read as bytes and sent in their
                              string form
  --binary-attributes <list>  More attributes to read as bytes, never as text (comma-separated):
                              mapped by name, they are sent as base64
  --passwords                 Also send userPassword, its {SCHEME} as password_format
  --ldap-ca <file>            Trust the PEM CA certificate(s) in this file for ldaps:// / StartTLS
  --target-ca <file>          Trust the PEM certificate(s) in this file for an https:// <url> (a
                              private CA, or the application's self-signed certificate)
  --start-tls                 Upgrade an ldap:// connection with StartTLS before binding
  --page-size <n>             Entries per page of the directory's paged search (default 500):
                              smaller pages hold less memory, larger ones read a little faster
  --state <file>              The SQLite file that keeps the cookie (default directory-sync.sqlite)
  --interval <time>           Time between cycles: 60s (default), 5m, 1h, 500ms
  --once                      Run one cycle and exit
  --full                      Start with a full re-sync (after a change of filter or mapping)
  --reset-request             The application serves POST /v1/reset: a full re-sync reads the
                              directory, lets the delete guard judge the users the reset would
                              remove (those the read did not return), then sends it
  --max-deletes <n>           The delete guard: a cycle that would delete more than n users
                              (default 500), or more than --max-delete-percent of the users the
                              application holds (default 20, from 20 deletes), or all of them,
                              sends nothing and exits 1. The deletes of the last --delete-window
                              count too, against the same thresholds
  --max-delete-percent <p>    See --max-deletes
  --delete-window <time>      The delete guard's rolling window, kept in the state file: 24h
                              (default), 90m, 1h (a unit is required), 0 to judge each cycle
                              alone
  --allow-deletes <n>         Let the next cycle the guard would stop delete up to n users (not
                              all of them): the answer to a stopped cycle, once its deletes are
                              checked. That cycle spends it, covered or not; the window's
                              deletes before it are then accepted
  --allow-delete-all          Let the next cycle the guard would stop delete every user the
                              application holds, which no count allows; spent the same way
  --no-content-sync           Read the whole directory every cycle, even where the server offers
                              Content Sync (RFC 4533), which update cycles otherwise use to read
                              only what changed
  --read-user <template>      After each completed cycle, read every user back through the
                              conformance checker's read route (a URL with {uuid}) and report
                              each field that differs from the directory (--json lists the
                              first 1000 differences, the text the first 20)
  --timeout <time>            How long one call may take: 500ms, 10s, 1m, or a number of
                              milliseconds (default 30s, as simulate: hooks that do real work
                              may answer slowly under a sync's load without being wrong)
  --json                      Print each cycle's report as one line of JSON (progress on stderr)
  -h, --help                  Show this help

What the sync does with each answer:
  201 to a create, 204 to a modify, delete, ping or reset
                              Acknowledged: kept in the state file, never sent again
  4xx to a user's create, modify or delete (400, 404, 409 for a username another user holds,
  422...)                     That user's message is held for the next cycle and the cycle goes
                              on with the others; the report lists each refusal
  5xx, 401, 403, 405, 407, 408, 429, another 2xx (200 to a create), a 4xx to a ping or a reset,
  a network error or a time-out
                              Stops the cycle; the next cycle starts again with that message
  An https:// certificate that is not trusted
                              Stops the sync for good (exit 1), with the fix

SIGINT or SIGTERM ends the cycle at the message in flight (sent again next time) and exits 0.

Exit status: 0 when the last cycle completed (or was stopped by SIGINT/SIGTERM), 1 when it
stopped on an error, held refused messages, was stopped by the delete guard, skipped every entry
of a full read (a mistyped --username-field, say), or a read-back found a difference;
2 for a wrong command line.
`;

/** `platform-integration sync <url> --ldap-url ... --base-dn ...`: {@link createDirectorySync}. */
export const syncCommand: Command = {
  name: "sync",
  summary:
    "Sync an LDAP directory or Active Directory into a Provisioning API, as the platform does",
  usage,
  async run(args, io) {
    const {
      values,
      url: target,
      timeoutMs,
      readUser,
    } = parseTargetCommandLine(
      args,
      {
        "ldap-url": { type: "string" },
        "bind-dn": { type: "string" },
        "bind-password-file": { type: "string" },
        "base-dn": { type: "string" },
        filter: { type: "string" },
        "username-field": { type: "string" },
        "disabled-accounts": { type: "string" },
        "user-id-field": { type: "string" },
        "uuid-field": { type: "string" },
        "binary-attributes": { type: "string" },
        "max-deletes": { type: "string" },
        "max-delete-percent": { type: "string" },
        "allow-deletes": { type: "string" },
        "allow-delete-all": { type: "boolean" },
        "delete-window": { type: "string" },
        passwords: { type: "boolean" },
        "ldap-ca": { type: "string" },
        "target-ca": { type: "string" },
        "start-tls": { type: "boolean" },
        state: { type: "string" },
        interval: { type: "string" },
        once: { type: "boolean" },
        full: { type: "boolean" },
        "reset-request": { type: "boolean" },
        "no-content-sync": { type: "boolean" },
        "page-size": { type: "string" },
        json: { type: "boolean" },
      },
      { defaultTimeoutMs: 30_000 },
    );
    const ldapUrl = required(values["ldap-url"], "ldap-url");
    if (!/^ldaps?:\/\//i.test(ldapUrl)) {
      throw new UsageError(
        `--ldap-url takes an ldap:// or ldaps:// URL, not "${redactUrl(ldapUrl)}"`,
      );
    }
    const baseDn = required(values["base-dn"], "base-dn");
    if (values.once && values.interval !== undefined) {
      throw new UsageError("--once and --interval exclude each other");
    }
    const intervalMs = parseDuration(values.interval ?? "60s");
    const pageSize =
      values["page-size"] === undefined
        ? undefined
        : integerOption(values["page-size"], "page-size", { min: 1, max: 100_000 });
    const count = (name: "max-deletes" | "max-delete-percent" | "allow-deletes", max: number) =>
      values[name] === undefined ? undefined : integerOption(values[name], name, { min: 0, max });
    const maxDeletes = count("max-deletes", 1_000_000_000);
    const maxPercent = count("max-delete-percent", 100);
    const allowDeletes = count("allow-deletes", 1_000_000_000);
    const windowText = values["delete-window"];
    const windowMs =
      windowText === undefined
        ? undefined
        : windowText.trim() === "0"
          ? 0
          : /^\s*\d+(?:\.\d+)?\s*$/.test(windowText)
            ? refuse(
                `--delete-window takes a time with its unit, such as 24h or 90m (a bare number could be seconds or hours), or 0; not "${windowText}"`,
              )
            : parseDuration(windowText, "--delete-window");
    const mapping = {
      ...(values["user-id-field"] !== undefined && { userId: values["user-id-field"] }),
      ...(values["uuid-field"] !== undefined && { uuid: values["uuid-field"] }),
    };
    const binaryAttributes = values["binary-attributes"]
      ?.split(",")
      .map((name) => name.trim())
      .filter(Boolean);
    const password = bindPassword(values["bind-password-file"], io);
    const bindDn = values["bind-dn"];
    const ca = values["ldap-ca"];
    const targetCa = values["target-ca"];
    const targetTls = targetCa === undefined ? undefined : { ca: readPem(targetCa, "--target-ca") };

    // A state file that this run created and that no cycle put anything in (the sync stopped
    // before the application or the directory took a message) is removed at the end: a command
    // that failed at once leaves no file behind.
    const statePath = values.state ?? "directory-sync.sqlite";
    const stateExisted = existsSync(statePath);
    let stateUsed = false;
    const progressOut = values.json ? io.stderr : io.stdout;
    const showProgress = throttledProgress(progressOut, io.stdout.isTTY === true && !values.json);
    // Loaded on use: node:sqlite (and its ExperimentalWarning) and ldapts only for this command,
    // so that every other command starts without them.
    const { createDirectorySync: create } = await import("../../ldap/create-directory-sync.ts");
    const sync = asUsageError(() =>
      create({
        ldap: {
          url: ldapUrl,
          ...(bindDn !== undefined && { bindDn }),
          ...(password !== undefined && { password }),
          ...(ca !== undefined && { tls: { ca: readFile(ca, "--ldap-ca") } }),
          ...(values["start-tls"] && { startTls: true }),
        },
        baseDn,
        ...(values.filter !== undefined && { filter: values.filter }),
        ...(values["username-field"] !== undefined && { usernameField: values["username-field"] }),
        ...(values["disabled-accounts"] !== undefined && {
          disabledAccounts: values["disabled-accounts"] as DisabledAccounts,
        }),
        ...(Object.keys(mapping).length > 0 && { mapping }),
        ...(binaryAttributes && { binaryAttributes }),
        ...((maxDeletes !== undefined || maxPercent !== undefined || windowMs !== undefined) && {
          deleteGuard: {
            ...(maxDeletes !== undefined && { maxDeletes }),
            ...(maxPercent !== undefined && { maxPercent }),
            ...(windowMs !== undefined && { windowMs }),
          },
        }),
        ...(allowDeletes !== undefined && { allowDeletes }),
        ...(values["allow-delete-all"] && { allowDeleteAll: true }),
        ...(values.passwords && { passwords: true }),
        ...(pageSize !== undefined && { pageSize }),
        target,
        ...(targetTls && { targetTls }),
        state: statePath,
        ...(values["reset-request"] && { resetRequest: true }),
        ...(values.full && { adoptState: true }),
        ...(values["no-content-sync"] && { contentSync: false }),
        timeoutMs,
        onProgress: (progress) => {
          // An acknowledgement is in the state file (or its journal): a run that fails after it
          // must keep the file, or the next run sends every user again.
          if (progress.created + progress.modified + progress.deleted > 0) stateUsed = true;
          showProgress(progress);
        },
        readInWorker: true,
      }),
    );
    let ok = true;
    const onCycle = async (report: DirectorySyncReport) => {
      stateUsed ||=
        report.completed ||
        report.created + report.modified + report.deleted + report.unchanged > 0;
      showProgress.finish();
      let verified: VerifyReport | undefined;
      if (report.completed && readUser !== undefined) {
        verified = await sync.verify(connectUserReader(readUser, { timeoutMs }), {
          signal: io.signal,
        });
      }
      // A cycle that SIGINT or SIGTERM ended is a requested stop, not a failure: what was
      // acknowledged is in the state file and the next run resumes there.
      const stopped = io.signal.aborted && report.refused === 0 && !report.deleteGuard;
      ok =
        stopped ||
        (report.completed &&
          !skippedEverything(report) &&
          (verified === undefined || verifiedAll(verified)));
      if (values.json) {
        io.stdout.write(`${JSON.stringify(verified ? { ...report, verified } : report)}\n`);
      } else {
        io.stdout.write(describeReport(report, verified, io));
      }
    };
    try {
      if (values.full) sync.requestResync();
      if (!values.json) {
        io.stdout.write(`Syncing ${baseDn} at ${redactUrl(ldapUrl)} into ${redactUrl(target)}\n`);
      }
      if (values.once) {
        await onCycle(await sync.syncOnce({ signal: io.signal }));
      } else {
        let pending = Promise.resolve();
        await sync.run({
          intervalMs,
          signal: io.signal,
          onCycle: (report) => {
            pending = pending.then(() => onCycle(report));
          },
        });
        await pending;
      }
    } catch (error) {
      // The first failure is the one to tell: closing after it (a full disk fails the last fold
      // too) must not replace it.
      await sync.close().catch(() => undefined);
      throw error;
    } finally {
      await sync.close();
      if (!stateExisted && !stateUsed) {
        for (const suffix of ["", "-acks", "-wal", "-shm", "-journal"]) {
          rmSync(`${statePath}${suffix}`, { force: true });
        }
      }
    }
    return ok ? 0 : 1;
  },
};

function refuse(message: string): never {
  throw new UsageError(message);
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === "") throw new UsageError(`Missing --${name}`);
  return value;
}

/** "60s", "5m", "1h", "500ms", or a bare number of seconds, in milliseconds. */
export function parseDuration(text: string, option = "--interval"): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const value = match ? Number(match[1]) * units[(match[2] ?? "s") as keyof typeof units] : 0;
  if (!(value >= 1)) {
    throw new UsageError(`${option} takes a time such as 60s, 5m or 1h, not "${text}"`);
  }
  return Math.round(value);
}

function bindPassword(file: string | undefined, io: CommandIo): string | undefined {
  if (file !== undefined) return readFile(file, "--bind-password-file").replace(/\r?\n$/, "");
  return io.env[bindPasswordVariable];
}

function readFile(path: string, option: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as { code?: string }).code ?? String(error);
    throw new UsageError(`${option}: cannot read ${path} (${reason})`);
  }
}

/** The PEM certificates in a file, checked as the library checks them. */
function readPem(path: string, option: string): string[] {
  return asUsageError(() => pemCertificates(readFile(path, option), `${option} ${path}`));
}

/** `make()`, with an option the library refuses (a TypeError) told as a command-line mistake. */
function asUsageError<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

interface ProgressLine {
  (progress: DirectorySyncProgress): void;
  finish(): void;
}

/** On a terminal a line redrawn in place; elsewhere a line every 10,000 messages. */
function throttledProgress(out: CommandIo["stderr"], tty: boolean): ProgressLine {
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
function skippedEverything(report: DirectorySyncReport): boolean {
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
