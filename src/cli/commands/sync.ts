// The sync command: its usage, and a run of the directory sync from its command line (parsed in
// sync-options.ts, printed by sync-report.ts): the cycles, once or at an interval, the read-back
// of each completed cycle, the exit status, and the state file a failed first run leaves behind.
import { existsSync, rmSync } from "node:fs";
import { redactUrl } from "../../internal/url.ts";
import type { createDirectorySync } from "../../ldap/create-directory-sync.ts";
import { connectUserReader } from "../../platform/read-user.ts";
import type { VerifyReport } from "../../platform/verify-users.ts";
import type { DirectorySyncReport } from "../../sync/directory-sync-types.ts";
import type { Command } from "../command.ts";
import { verifiedAll } from "../verify-output.ts";
import { asUsageError, bindPasswordVariable, parseSyncCommandLine } from "./sync-options.ts";
import { describeReport, skippedEverything, throttledProgress } from "./sync-report.ts";

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
      ldapUrl,
      baseDn,
      target,
      timeoutMs,
      readUser,
      intervalMs,
      statePath,
      settings,
    } = parseSyncCommandLine(args, io);
    // A state file that this run created and that no cycle put anything in (the sync stopped
    // before the application or the directory took a message) is removed at the end: a command
    // that failed at once leaves no file behind.
    const stateExisted = existsSync(statePath);
    let stateUsed = false;
    const progressOut = values.json ? io.stderr : io.stdout;
    const showProgress = throttledProgress(progressOut, io.stdout.isTTY === true && !values.json);
    // Loaded on use: node:sqlite (and its ExperimentalWarning) and ldapts only for this command,
    // so that every other command starts without them.
    const { createDirectorySync: create } = await import("../../ldap/create-directory-sync.ts");
    const sync = asUsageError(() =>
      create({
        ...settings,
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
