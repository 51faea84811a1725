import { redactUrl } from "../../internal/url.ts";
import { whyPingFailed } from "../../testing/conformance-diagnosis.ts";
import {
  createPlatformSimulator,
  type MessageKind,
  type PlatformSimulator,
  type SimulatorSyncReport,
} from "../../testing/platform-simulator.ts";
import { createUserGenerator } from "../../testing/user-generator.ts";
import { integerOption, parseTargetCommandLine, targetOptionsUsage } from "../args.ts";
import type { Command, CommandIo } from "../command.ts";
import { createProgress } from "../progress.ts";
import { parseScimCommandLine, scimOptionsUsage, wantsScim } from "../scim-args.ts";
import { formatTable } from "../table.ts";
import { describeVerifyReport, verifiedAll } from "../verify-output.ts";

const defaultTimeoutMs = 30_000;
/** Every generated user's uuid and username start with it; emails are at example.invalid. */
const testPrefix = "simulate";

const usage = `Usage: platform-integration simulate <url> --users <n> [options]
       platform-integration simulate --scim <url> --token <token> --users <n> [options]

Plays the platform against a Provisioning API: generates <n> users, runs the initial sync (a
ping, then a create for each user), then a round of changes (modify, delete, add), one message
at a time and in order, as the platform does. Only the spec's statuses count (201 for create,
204 for the rest); any other answer stops the sync. An acknowledged message says nothing of what
was stored: with --read-user, every user is then read back and compared field by field.

Arguments:
  <url>              The Provisioning API's base URL, as the release's provisioner setting
                     holds it

Options:
  --users <n>        How many users the directory holds (required)
  --changes <m>      How many changes follow the initial sync (default: a tenth of the users)
  --seed <s>         Seed of the generated directory: the same seed, the same users (default 1)
${targetOptionsUsage(defaultTimeoutMs, "under a sync's load, hooks that do real work (hashing, a database's constraints) may answer slowly without being wrong")}
  -h, --help         Show this help

Test users: uuids and usernames start with ${testPrefix}-, emails are at example.invalid, so that
the application's hooks can tell. They stay in the application afterwards, as a directory's
users do.

SCIM 2.0: --scim <url> pushes the directory into a SCIM service instead, as Entra ID does: its
connection test for the ping, each user matched by externalId (its uuid), POST for a new one,
one PATCH Replace per changed attribute, "active": "False" for a deleted one (deactivated, not
deleted), then every user read back through SCIM and compared. It takes --users, --changes,
--seed and --timeout as above, and:
${scimOptionsUsage}

Exit status: 0 when the sync completed (and, with --read-user or --scim, every user was stored
as sent), 1 otherwise, 2 for a wrong command line.
`;

/** `platform-integration simulate <url> --users N`: the platform's sync at scale, with progress. */
export const simulateCommand: Command = {
  name: "simulate",
  summary: "Sync a generated directory of users to a Provisioning API, as the platform does",
  usage,
  async run(args, io) {
    const own = {
      users: { type: "string" },
      changes: { type: "string" },
      seed: { type: "string" },
    } as const;
    // With --scim, the directory goes to a SCIM service as Entra ID pushes it, read back by SCIM.
    const scim = wantsScim(args)
      ? parseScimCommandLine(args, own, { defaultTimeoutMs, io })
      : undefined;
    const { values, url, timeoutMs, readUser } = scim
      ? { ...scim, readUser: undefined }
      : parseTargetCommandLine(args, own, { defaultTimeoutMs });
    const users = integerOption(values.users, "users", { min: 1 });
    const changes = integerOption(values.changes, "changes", {
      min: 0,
      fallback: Math.max(1, Math.round(users / 10)),
    });
    const seed = values.seed ?? "1";

    let progress = createProgress(io, "initial sync");
    const platform = createPlatformSimulator({
      target: url,
      timeoutMs,
      onProgress: ({ done, total }) => progress.update(done, total),
      ...(readUser !== undefined && { readUser }),
      ...(scim && { scim: { token: scim.token } }),
    });
    io.stdout.write(
      `Simulating ${scim ? "Entra ID's SCIM push" : "the platform"} against ${redactUrl(url)}: ${users} users, seed ${seed}\n`,
    );
    const generator = createUserGenerator({
      seed: /^\d+$/.test(seed) ? Number(seed) : seed,
      testPrefix,
    });
    for (const user of generator.users(users)) platform.addUser(user);

    const reports: SimulatorSyncReport[] = [];
    const cycle = async (label: string, unit: string) => {
      const count = platform.pending;
      const report = await platform.sync({ signal: io.signal });
      progress.finish();
      reports.push(report);
      const seconds = Math.max(report.durationMs, 1) / 1000;
      const delivered = report.delivered.filter(({ message }) => message.kind !== "ping").length;
      io.stdout.write(
        `${label}: ${delivered} of ${count} messages in ${seconds.toFixed(2)} s, ${Math.round(delivered / seconds)} ${unit}/s\n`,
      );
      return report.completed;
    };

    let completed = await cycle("Initial sync", "users");
    if (completed && changes > 0) {
      const round = generator.changes(changes);
      for (const change of round) platform.apply(change);
      const count = (type: string) => round.filter((change) => change.type === type).length;
      io.stdout.write(
        `Changes: ${count("change")} modified, ${count("remove")} deleted, ${count("add")} added\n`,
      );
      progress = createProgress(io, "changes");
      completed = await cycle("Changes", "changes");
    }
    printReport(io, reports, completed, url, scim !== undefined);
    if (!completed) return 1;
    if (readUser === undefined && !scim) {
      io.stdout.write("What the application stored was not verified: see --read-user.\n");
      return 0;
    }
    return (await verify(io, platform)) ? 0 : 1;
  },
};

function printReport(
  io: CommandIo,
  reports: SimulatorSyncReport[],
  completed: boolean,
  url: string,
  scim: boolean,
) {
  const kinds: MessageKind[] = ["ping", "create", "modify", "delete"];
  const deliveries = reports.flatMap((report) => report.delivered);
  const rows = kinds.flatMap((kind) => {
    const delivered = deliveries.filter(({ message }) => message.kind === kind);
    if (delivered.length === 0) return [];
    const mean = delivered.reduce((sum, { durationMs }) => sum + durationMs, 0) / delivered.length;
    const slowest = Math.max(...delivered.map(({ durationMs }) => durationMs));
    return [[kind, String(delivered.length), `${mean.toFixed(1)} ms`, `${slowest.toFixed(1)} ms`]];
  });
  if (rows.length > 0) {
    io.stdout.write(`\n${formatTable(["MESSAGE", "DELIVERED", "MEAN", "SLOWEST"], rows)}\n`);
  }
  const stop = reports.at(-1)?.stoppedAt;
  if (completed || !stop) {
    const messages = deliveries.filter(({ message }) => message.kind !== "ping").length;
    io.stdout.write(`\nSync completed: the application acknowledged all ${messages} messages.\n`);
    return;
  }
  const what = [stop.message.kind, stop.message.uuid].filter(Boolean).join(" ");
  // A failed ping says what to check, as conformance does (a 404 or a web page: the base path).
  const answer =
    stop.error ??
    (stop.message.kind === "ping" && stop.status !== undefined && !scim
      ? whyPingFailed({ status: stop.status, body: stop.body, durationMs: 0 }, url)
      : `status ${stop.status}${stop.body === undefined ? "" : ` ${JSON.stringify(stop.body)}`}`);
  const remaining = reports.at(-1)?.remaining ?? 0;
  const stopped = io.signal.aborted ? "interrupted" : "stopped";
  io.stdout.write(
    `\nSync ${stopped} at ${what} (attempt ${stop.attempt}): ${answer}\n` +
      `${remaining} messages not delivered; the platform would resume with this one at its next cycle.\n`,
  );
}

/** Reads every user back; prints the verdict; true when the application stored them all as sent. */
async function verify(io: CommandIo, platform: PlatformSimulator): Promise<boolean> {
  const report = await platform.verify({ signal: io.signal });
  io.stdout.write(describeVerifyReport(report));
  return verifiedAll(report);
}
