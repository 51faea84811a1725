import {
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceResult,
  runConformance,
} from "../../testing/conformance.ts";
import { parseTargetCommandLine, targetOptionsUsage } from "../args.ts";
import type { Command, CommandIo } from "../command.ts";
import { parseScimCommandLine, scimOptionsUsage, wantsScim } from "../scim-args.ts";
import { formatTable, labelled } from "../table.ts";

const defaultTimeoutMs = 10_000;

const usage = `Usage: platform-integration conformance <url> [options]
       platform-integration conformance --scim <url> --token <token> [--timeout <time>] [--json]

Checks a Provisioning API implementation, in any language, from the outside: every rule of the
spec's sections 4.1 and 7 (statuses, duplicate create, modify and delete of a missing user),
idempotent redelivery, partial modify, unknown fields, uuids with reserved URL characters,
non-ASCII data, refusal of invalid JSON and of a record without uuid, and a full simulated sync
with changes. A line on stderr tells each check's result as it ends; the table follows at the
end. It stops after the first check when ping fails, and at the first check in which a call
gets no answer within the time-out (one line, not a wait per check), saying what to check.

The API has no read endpoint: without --read-user, the checks whose names claim an effect
("updates", "keeps the other fields", "is deleted") look at statuses only, and say so.

Arguments:
  <url>              The Provisioning API's base URL, as the release's provisioner setting
                     holds it: http://10.0.0.5:3000, https://host/ldap/auth

Options:
${targetOptionsUsage(defaultTimeoutMs, "each call is one small message, which a working application answers well within it")}
  --conflicts        Add the check that swaps two users' emails, as a directory does when two
                     people trade addresses: both modifies must succeed (with --read-user, both
                     emails must end swapped). An application with a unique email passes it
                     with the handler's quarantine option; off by default, since not every
                     application holds emails unique
  --json             Print the report as JSON
  -h, --help         Show this help

SCIM 2.0: --scim <url> checks a SCIM service instead (<url> is its base, the part before
/Users: https://host/scim/v2) with Entra ID's and Okta's published sequences: a connection test,
create, get, filter by userName and by externalId, PATCH Replace/Add/Remove with and without
path and with string booleans ("False"), disable and enable, a PATCH that must keep a disabled
user inactive, PUT, duplicate create 409, unknown user 404, wrong token 401, pagination. Every
check reads back what it changed. Its users (userNames conformance-...@example.invalid) are
deleted after each check with DELETE /Users/{id}. It takes --timeout and --json as above, and:
${scimOptionsUsage}

Test users: every user it creates is a test user (uuid and username start with conformance-,
emails are at example.invalid), so that the application's hooks can tell. It deletes every user
after each check, also when a check fails and on Ctrl-C. It may leave behind: users whose delete
the application refused or did not apply, or did not answer in time (the clean-up then gives up
and names the users it did not try: all are listed at the end, by uuid), and, if the process is
killed (a second Ctrl-C, SIGKILL), the users of the check under way (up to about 25). After
Ctrl-C each clean-up call waits 5 s at most.

Exit status: 0 when every check passed (warnings allowed), 1 when one failed or the run stopped
early, 2 for a wrong command line.
`;

/** `platform-integration conformance <url>`: {@link runConformance} with a table or JSON. */
export const conformanceCommand: Command = {
  name: "conformance",
  summary: "Check a Provisioning API implementation, or a SCIM service, from the outside",
  usage,
  async run(args, io) {
    if (wantsScim(args)) return runScim(args, io);
    const { values, url, timeoutMs, readUser } = parseTargetCommandLine(
      args,
      { json: { type: "boolean" }, conflicts: { type: "boolean" } },
      { defaultTimeoutMs },
    );
    return check(io, url, values.json === true, {
      timeoutMs,
      conflicts: values.conflicts === true,
      ...(readUser !== undefined && { readUser }),
    });
  },
};

/** Runs the checks with progress on stderr and Ctrl-C handled; prints the report; the status. */
async function check(
  io: CommandIo,
  url: string,
  json: boolean,
  options: ConformanceOptions,
): Promise<number> {
  const onInterrupt = () =>
    io.stderr.write(
      "Interrupted: deleting the users of the check under way (Ctrl-C again to quit at once).\n",
    );
  io.signal.addEventListener("abort", onInterrupt, { once: true });
  const report = await runConformance(url, {
    ...options,
    signal: io.signal,
    // Progress on stderr as each check ends: the table comes at the end, on stdout.
    onResult: (result, { index, total }) =>
      io.stderr.write(
        `[${String(index).padStart(String(total).length)}/${total}] ${resultLabel(result).padEnd(6)}${result.name}\n`,
      ),
  }).finally(() => io.signal.removeEventListener("abort", onInterrupt));
  if (json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(io, report);
  return report.passed ? 0 : 1;
}

/** `conformance --scim <url> --token …`: the SCIM checks, printed as the others are. */
async function runScim(args: string[], io: CommandIo): Promise<number> {
  const { values, url, token, timeoutMs } = parseScimCommandLine(
    args,
    { json: { type: "boolean" } },
    { defaultTimeoutMs, io },
  );
  return check(io, url, values.json === true, { timeoutMs, scim: { token } });
}

const resultLabel = (result: ConformanceResult) =>
  !result.passed ? "FAIL" : result.warning === undefined ? "pass" : "WARN";

function printReport(io: CommandIo, report: ConformanceReport): void {
  const out = (text = "") => io.stdout.write(`${text}\n`);
  const width = Math.min(io.stdout.isTTY ? (io.stdout.columns ?? 80) : 80, 80);
  if (report.stoppedEarly !== undefined) {
    out(`Stopped: ${report.stoppedEarly}`);
    printLeftBehind(out, report, width);
    return;
  }
  const rows = report.results.map((result) => [
    resultLabel(result),
    result.effects ?? "",
    result.name,
  ]);
  out(formatTable(["RESULT", "EFFECTS", "CHECK"], rows, width));
  for (const result of report.results) {
    if (result.passed && result.warning === undefined) continue;
    out();
    out(labelled(`${resultLabel(result)} `, result.name, width));
    out(labelled("  rule:     ", result.rule, width));
    out(labelled("  expected: ", result.expected, width));
    out(labelled("  got:      ", result.actual, width));
    if (result.warning !== undefined) out(labelled("  advice:   ", result.warning, width));
  }
  const failed = report.results.filter((result) => !result.passed).length;
  const warnings = report.results.filter((result) => result.warning !== undefined).length;
  const passed = report.results.length - failed - warnings;
  const counts = [
    `${passed} of ${report.results.length} checks passed`,
    ...(failed > 0 ? [`${failed} failed`] : []),
    ...(warnings > 0 ? [`${warnings} ${warnings === 1 ? "warning" : "warnings"}`] : []),
  ];
  out();
  out(`${counts.join(", ")}${io.signal.aborted ? " (interrupted)" : ""}.`);
  const statusOnly = report.results.filter((result) => result.effects === "status only").length;
  if (!report.effectsVerified) {
    out(
      labelled(
        "",
        `Effects were not verified: ${statusOnly} checks looked at statuses only. Pass --read-user to read users back (see --help).`,
        width,
      ),
    );
  }
  const kept = report.deactivated.length;
  if (kept > 0) {
    // Deleted as the platform sees it, but the rows stay: say so, rather than "deleted".
    out(
      labelled(
        "",
        `The application keeps ${kept} of the users it created deactivated: deleted as the platform sees it, but their rows stay (uuids starting "conformance-").`,
        width,
      ),
    );
  }
  if (report.leftBehind.length === 0) {
    out(
      kept > 0 ? "Every other user it created was deleted." : "Every user it created was deleted.",
    );
  }
  printLeftBehind(out, report, width);
}

function printLeftBehind(
  out: (text?: string) => void,
  report: ConformanceReport,
  width: number,
): void {
  if (report.leftBehind.length === 0) return;
  out(`Could not delete ${report.leftBehind.length} users it created; delete them by hand:`);
  for (const { uuid, reason } of report.leftBehind)
    out(labelled("  ", `${uuid} (${reason})`, width));
}
