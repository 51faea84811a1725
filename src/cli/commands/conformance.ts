import { runConformance } from "../../testing/conformance.ts";
import { baseUrlArgument, integerOption, parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";
import { formatTable } from "../table.ts";

const usage = `Usage: platform-integration conformance <url> [options]

Checks a Provisioning API implementation, in any language, from the outside: every rule of the
spec's sections 4.1 and 7 (statuses, duplicate create, modify and delete of a missing user),
idempotent redelivery, partial modify, unknown fields, uuids with reserved URL characters,
non-ASCII data, refusal of invalid JSON and of a record without uuid, and a full simulated sync
with changes. Each check uses fresh random uuids (conformance-...) and deletes what it created,
so it can run against a live application.

Arguments:
  <url>           The Provisioning API's base URL, as the release's provisioner setting holds it:
                  http://10.0.0.5:3000, https://host/ldap/auth

Options:
  --json          Print the report as JSON
  --timeout <ms>  How long one call may take (default 10000)
  -h, --help      Show this help

Exit status: 0 when every check passed, 1 when one failed, 2 for a wrong command line.
`;

/** `platform-integration conformance <url>`: {@link runConformance} with a table or JSON. */
export const conformanceCommand: Command = {
  name: "conformance",
  summary: "Check a Provisioning API implementation against the spec, from the outside",
  usage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: "boolean" },
      timeout: { type: "string" },
    });
    const url = baseUrlArgument(positionals);
    const timeoutMs = integerOption(values.timeout, "timeout", { min: 1, fallback: 10_000 });
    const report = await runConformance(url, { timeoutMs, signal: io.signal });
    if (values.json) {
      io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return report.passed ? 0 : 1;
    }
    const rows = report.results.map((result) => [
      result.name,
      result.passed ? "pass" : "FAIL",
      result.expected,
      result.actual,
    ]);
    const width = io.stdout.isTTY ? io.stdout.columns : undefined;
    io.stdout.write(`${formatTable(["CHECK", "RESULT", "EXPECTED", "GOT"], rows, width)}\n`);
    const failures = report.results.filter((result) => !result.passed);
    for (const failure of failures) {
      io.stdout.write(
        `\nFAIL ${failure.name} (${failure.rule})\n  expected: ${failure.expected}\n  got:      ${failure.actual}\n`,
      );
    }
    const passed = report.results.length - failures.length;
    const interrupted = io.signal.aborted ? " (interrupted)" : "";
    io.stdout.write(`\n${passed} of ${report.results.length} checks passed${interrupted}.\n`);
    return report.passed ? 0 : 1;
  },
};
