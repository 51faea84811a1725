import { readFile } from "node:fs/promises";
import {
  durationOption,
  parseCommandArgs,
  provisioningUrlOption,
  readUserOption,
} from "../args.ts";
import { type Command, type CommandIo, UsageError } from "../command.ts";
import type { CheckResult } from "../doctor/check.ts";
import type { DoctorReport } from "../doctor/run-doctor.ts";
import { formatTable } from "../table.ts";

const usage = `Usage: platform-integration doctor [options]

Diagnoses the integration from inside the application's container, in the order a request
travels: PLATFORM_INTEGRATIONAPI set and well formed, the host resolvable, the port reachable, the
TLS certificate the API presents (subject, issuer, validity, SHA-256 fingerprint, self-signed or
not) and the SDK option that trusts it, the Version API's answer, and this machine's clock against
the API's Date header. Calls are made as the SDK's clients make them, without retries.

Options:
  --base-url <url>        The Integration API's URL (default: $PLATFORM_INTEGRATIONAPI)
  --ca <file>             Trust the PEM certificate(s) in this file, as the tls.ca option does
  --insecure              Accept any certificate, as tls: { rejectUnauthorized: false } does
  --provisioner <url>     Also check that the Provisioning API at this URL (the release's
                          provisioner setting) answers GET /v1/ping with 204 from here
  --read-user <template>  Also check the conformance checker's read route (a URL with {uuid}):
                          it must answer 404 for a uuid that does not exist
  --audit-test-event      Also write one audit event, action platform-integration.doctor.test,
                          that says it is a test: it stays in the platform's audit log
  --timeout <time>        How long each check may wait: 500ms, 10s, or a number of
                          milliseconds (default 5s: one small call from inside the
                          container; a slower answer is itself worth reporting)
  --json                  Print one JSON document on stdout (progress goes to stderr)
  -h, --help              Show this help

Exit status: 0 when no check failed (warnings allowed), 1 when one failed, 2 for a wrong
command line. Each failure comes with its fix in one line.
`;

const marks: Record<CheckResult["status"], string> = {
  pass: "ok",
  warn: "WARN",
  fail: "FAIL",
  skip: "skip",
};

/** `platform-integration doctor`: every check from the Integration API's URL to the audit log. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Diagnose the integration from inside the application's container",
  usage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      "base-url": { type: "string" },
      ca: { type: "string" },
      insecure: { type: "boolean" },
      provisioner: { type: "string" },
      "read-user": { type: "string" },
      "audit-test-event": { type: "boolean" },
      timeout: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length > 0) throw new UsageError(`Unexpected argument: ${positionals[0]}`);
    if (values.ca !== undefined && values.insecure) {
      throw new UsageError(
        "Pass --ca or --insecure, not both: --insecure accepts any certificate.",
      );
    }
    const readUser = readUserOption(values["read-user"]);
    if (values.provisioner !== undefined) provisioningUrlOption(values.provisioner, "provisioner");
    const timeoutMs = durationOption(values.timeout, "timeout", { fallback: 5_000, bareUnitMs: 1 });
    const ca = values.ca === undefined ? undefined : await readCa(values.ca);

    // Loaded on use, like the demo: the other commands start without the clients.
    const { runDoctor } = await import("../doctor/run-doctor.ts");
    const progress = createStepProgress(io);
    const report = await runDoctor({
      baseUrl: values["base-url"],
      env: io.env,
      trust: { ca, insecure: values.insecure === true },
      provisioner: values.provisioner,
      readUser,
      auditTestEvent: values["audit-test-event"] === true,
      timeoutMs,
      signal: io.signal,
      onProgress: progress.step,
    });
    progress.finish();
    io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : render(report, io));
    return report.passed ? 0 : 1;
  },
};

async function readCa(file: string): Promise<{ pem: string; file: string }> {
  let pem: string;
  try {
    pem = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `Cannot read --ca ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UsageError(`--ca ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return { pem, file };
}

function render(report: DoctorReport, io: CommandIo): string {
  const rows = report.checks.map((check) => [check.title, marks[check.status], check.summary]);
  // Piped, the table is not wrapped: a fingerprint or a path must be copyable in one piece.
  const width = io.stdout.isTTY ? io.stdout.columns : Number.POSITIVE_INFINITY;
  const lines = [formatTable(["CHECK", "RESULT", "FOUND"], rows, width), ""];
  for (const check of report.checks) {
    if (check.fix !== undefined && (check.status === "fail" || check.status === "warn")) {
      lines.push(`${marks[check.status]} ${check.id}: ${check.fix}`);
    }
  }
  const failed = report.checks.filter((check) => check.status === "fail").length;
  lines.push(
    failed === 0
      ? "No problem found by these checks."
      : `${failed} check${failed === 1 ? "" : "s"} failed.`,
    "",
  );
  return lines.join("\n");
}

/**
 * One line per step on stderr, so that stdout stays the report (one JSON document with --json).
 * On a terminal the line is redrawn in place and cleared at the end.
 */
function createStepProgress(io: CommandIo): { step(text: string): void; finish(): void } {
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  let drawn = false;
  return {
    step(text) {
      if (tty) {
        io.stderr.write(`\r\u001b[2Kdoctor: ${text}…`);
        drawn = true;
      } else {
        io.stderr.write(`doctor: ${text}…\n`);
      }
    },
    finish() {
      if (drawn) io.stderr.write("\r\u001b[2K");
    },
  };
}
