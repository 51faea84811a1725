// The demo's scenario, read top to bottom: setUp starts the app, the fake Integration API and the
// platform its steps share; the helpers below them only check and format what each step reports.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toNodeHandler } from "../adapters/node/index.ts";
import { createAuditClient, defineAuditActions } from "../clients/audit/index.ts";
import { createVersionClient } from "../clients/version/index.ts";
import { createProvisioningHandler } from "../provisioning/handler.ts";
import { createFakeIntegrationApi } from "../testing/fake-integration-api.ts";
import {
  createPlatformSimulator,
  type DirectoryChange,
  type MessageKind,
  type MessageSummary,
  type SimulatorSyncReport,
} from "../testing/platform-simulator.ts";
import { createUserGenerator } from "../testing/user-generator.ts";
import type { UserStore } from "../users/user-store.ts";
import type { CommandIo } from "./command.ts";
import { createProgress } from "./progress.ts";
import { serveFetch } from "./serve-fetch.ts";

const actions = defineAuditActions({
  created: "directory.user.created",
  updated: "directory.user.updated",
  deleted: "directory.user.deleted",
  reset: "directory.reset",
});

/** A step whose outcome is not the one the demo describes: the demo stops and exits 1. */
class DemoFailure extends Error {}

/**
 * The demo command's work, in a module of its own so that the CLI loads it only when asked. The
 * SQLite file lives in a new temporary folder, removed at the end unless `keep`. Resolves with
 * the exit status: 0 when every step went as described.
 */
export async function runDemo(
  io: CommandIo,
  { users, keep }: { users: number; keep: boolean },
): Promise<number> {
  const folder = await mkdtemp(join(tmpdir(), "platform-integration-demo-"));
  const file = join(folder, "users.db");
  const cleanup: (() => unknown)[] = [];
  try {
    return await demo(io, { users, file, cleanup });
  } catch (error) {
    if (!(error instanceof DemoFailure)) throw error;
    io.stdout.write(`\n${error.message}\n`);
    return 1;
  } finally {
    // In reverse order of starting: the audit client flushes before its API goes away.
    for (const stop of cleanup.reverse()) await stop();
    if (keep) io.stdout.write(`\nKept the database: ${file}\n`);
    else await rm(folder, { recursive: true, force: true });
  }
}

async function demo(
  io: CommandIo,
  { users, file, cleanup }: { users: number; file: string; cleanup: (() => unknown)[] },
): Promise<number> {
  const started = performance.now();
  const scene = await setUp(io, file, cleanup);
  introduce(scene, users);
  await initialSync(scene, users);
  const round = await loseAnAnswer(scene, users);
  const joined = await failTheStore(scene, users);
  const held = await summarize(scene, { users, round, joined });
  scene.out();
  scene.out(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  verify(scene, { ...held, story: users + round.length + joined + 1 });
  return 0;
}

/** What the demo starts, shared by its steps; `audited` counts what the app gave the audit client. */
type Scene = Awaited<ReturnType<typeof setUp>>;

/** Starts the store, the fake Integration API, the audit client, the app and the platform. */
async function setUp(io: CommandIo, file: string, cleanup: (() => unknown)[]) {
  const out = (line = "") => io.stdout.write(`${line}\n`);
  const database = await openSqlite(file);
  cleanup.push(() => database.close());
  const store = failOnce(database);

  const integrationApi = createFakeIntegrationApi({
    current: { version: "1.4.0", releaseSequence: 40, releaseNotes: "Directory sync" },
    updates: [
      { version: "1.5.0", releaseSequence: 41, releaseNotes: "Faster search, audit export" },
    ],
  });
  const served = await serveFetch(integrationApi.respond, { host: "127.0.0.1", port: 0 });
  cleanup.push(() => served.close());

  const audited = { recorded: 0, dropped: 0 };
  const audit = createAuditClient({
    baseUrl: served.baseUrl,
    actions,
    onDrop: (drop) => {
      audited.dropped += drop.count;
    },
  });
  cleanup.push(() => audit.close());

  const handler = createProvisioningHandler({
    store: store.store,
    onChange: (change) => {
      audited.recorded++;
      audit.record({
        action: actions[change.type],
        title: change.type === "reset" ? "Directory reset" : `User ${change.type}`,
        description:
          change.type === "reset"
            ? "The platform reset the directory"
            : `${change.user?.username ?? change.uuid} ${change.type} by the directory sync`,
      });
    },
    onError: (error, { operation, uuid, status }) =>
      out(`   app: ${describe({ kind: operation, uuid })} answered ${status}: ${messageOf(error)}`),
  });
  const app = await listen(toNodeHandler(handler));
  cleanup.push(() => app.close());

  let progress = createProgress(io, "initial sync");
  const platform = createPlatformSimulator({
    target: app.baseUrl,
    onProgress: ({ done, total }) => progress.update(done, total),
  });
  const sync = async () => {
    const report = await platform.sync({ signal: io.signal });
    progress.finish();
    progress = silent;
    if (io.signal.aborted) throw new DemoFailure("Interrupted.");
    return report;
  };
  const generator = createUserGenerator({ seed: 1 });
  return {
    out,
    file,
    database,
    store,
    integrationApi,
    served,
    audit,
    audited,
    app,
    platform,
    sync,
    generator,
  };
}

function introduce({ out, app, file, served }: Scene, users: number): void {
  out(`platform-integration demo: ${count(users, "directory user")}, all on this machine`);
  out();
  out(`  app              ${app.baseUrl}  the Provisioning API over a SQLite store`);
  out(`  database         ${file}`);
  out(`  Integration API  ${served.baseUrl}  a local fake of the Version and Audit APIs`);
  out("  platform         simulated: a generated directory, one message at a time, in order");
  out();
}

/** Step 1: the generated directory's users, a create each. */
async function initialSync({ out, platform, generator, sync }: Scene, users: number) {
  for (const user of generator.users(users)) platform.addUser(user);
  out("1. Initial sync: a create for every user in the directory");
  const initial = expectCompleted(await sync(), "The initial sync");
  out(`   ${count(users, "user")} created in ${rate(initial, "users")}`);
  out();
}

/** Step 2: a round of directory changes whose first answer is lost; resolves with the round. */
async function loseAnAnswer({ out, platform, generator, sync }: Scene, users: number) {
  const round = generator.changes(Math.max(3, Math.round(users / 10)));
  for (const change of round) platform.apply(change);
  const [modified, deleted, added] = [
    tally(round, "change"),
    tally(round, "remove"),
    tally(round, "add"),
  ];
  out(`2. Directory changes: ${modified} modified, ${deleted} deleted, ${added} added`);
  // The fault hits the round's first message; the answer is lost after the app stored it.
  const first = kindOf(round[0] as DirectoryChange);
  platform.injectFault({ type: "drop-response", on: first });
  const lost = expectStopped(await sync(), "The lost answer");
  out(`   The answer to ${describe(lost.message)} is lost on its way back (injected): the app`);
  out("   has applied it, but the platform does not know, so the sync stops there.");
  const redelivered = expectCompleted(await sync(), "The next cycle");
  const again = expectResumed(redelivered, lost.message);
  out(
    `   Next cycle: the same ${first} again (attempt ${again.attempt}), answered ${again.status}; ` +
      "applying it twice changes nothing.",
  );
  // The handler reports a change to onChange once per delivery (at least once, so that a hook
  // that failed sees it again): the redelivered message is audited a second time.
  out("   Its onChange hook runs again (at least once per change): one audit event more.");
  out(`   ${count(delivered(redelivered), "message")} delivered.`);
  out();
  return round;
}

/** Step 3: new users join and the store fails the first write; resolves with how many joined. */
async function failTheStore({ out, platform, generator, store, sync }: Scene, users: number) {
  const joined = Math.max(3, Math.round(users / 100));
  for (const user of generator.users(joined)) platform.addUser(user);
  out(`3. Store failure: ${count(joined, "new user")} join, and the next write fails (injected)`);
  store.failNextUpsert();
  const failed = expectStopped(await sync(), "The store failure");
  const body = failed.body as { error?: string } | undefined;
  out(
    `   The platform gets ${failed.status} ${body?.error ?? ""} for ${describe(failed.message)}: ` +
      "nothing was stored, and",
  );
  out(`   the sync pauses with ${count(platform.pending, "message")} waiting.`);
  const retried = expectCompleted(await sync(), "The retry");
  const retry = expectResumed(retried, failed.message);
  out(
    `   Next cycle: the same create again (attempt ${retry.attempt}), answered ${retry.status}; ` +
      `${count(delivered(retried), "message")} delivered.`,
  );
  out();
  return joined;
}

/** The summary table: what the database, the audit log and the Version API hold at the end. */
async function summarize(
  { out, audit, served, database, integrationApi }: Scene,
  { users, round, joined }: { users: number; round: DirectoryChange[]; joined: number },
): Promise<{ inDatabase: number; received: number }> {
  // Everything queued is delivered before the audit log is read.
  await audit.flush({ timeoutMs: 30_000 });
  const version = createVersionClient({ api: "integration", baseUrl: served.baseUrl });
  const [current, updates] = await Promise.all([version.current(), version.updates()]);
  const inDatabase = await database.count();
  const received = integrationApi.auditEvents.length;
  const rows: [string, string, string][] = [
    [
      "users in the database",
      number(inDatabase),
      `${number(users)} created - ${tally(round, "remove")} deleted + ${tally(round, "add")} added + ${joined} joined`,
    ],
    [
      "audit events recorded",
      number(received),
      `${number(users)} created + ${round.length} changed + ${joined} joined + 1 redelivered`,
    ],
    [
      "running version",
      current.version,
      `release ${current.releaseSequence}, installed ${current.installDate.text.slice(0, 10)}`,
    ],
    [
      "pending updates",
      number(updates.length),
      updates
        .map((u) => `${u.version} (release ${u.releaseSequence}): ${u.releaseNotes}`)
        .join(", "),
    ],
  ];
  const width = Math.max(...rows.map(([, value]) => value.length));
  out("Summary");
  for (const [label, value, detail] of rows) {
    out(`  ${label.padEnd(22)} ${value.padStart(width)}  ${detail}`);
  }
  return { inDatabase, received };
}

/**
 * Fails the demo unless the database holds the directory's users and the audit log every event
 * recorded, `story` of them: one per change stored, one more for the message delivered twice.
 */
function verify(
  { platform, audited }: Scene,
  { inDatabase, received, story }: { inDatabase: number; received: number; story: number },
): void {
  const inDirectory = platform.users().length;
  if (inDatabase !== inDirectory) {
    throw new DemoFailure(`The database holds ${inDatabase} users, the directory ${inDirectory}.`);
  }
  if (received + audited.dropped !== audited.recorded) {
    throw new DemoFailure(
      `${audited.recorded - received - audited.dropped} audit events are unaccounted for.`,
    );
  }
  if (received !== story) {
    throw new DemoFailure(
      `The audit log holds ${received} events where the story adds up to ${story}.`,
    );
  }
}

/**
 * The package's SQLite store, loaded only by this command: on a runtime without node:sqlite,
 * importing it throws an error that says what it needs, and the demo stops with it.
 */
async function openSqlite(file: string) {
  let module: typeof import("../stores/sqlite/index.ts");
  try {
    module = await import("../stores/sqlite/index.ts");
  } catch (error) {
    throw new DemoFailure(`The demo keeps users in SQLite. ${messageOf(error)}`);
  }
  return new module.SqliteUserStore(file);
}

/** The store, and a switch that makes its next upsert throw, as a full disk or a lost link would. */
function failOnce(inner: UserStore) {
  let armed = false;
  const store: UserStore = {
    upsert(patch) {
      if (!armed) return inner.upsert(patch);
      armed = false;
      return Promise.reject(new Error("disk I/O error (injected by the demo)"));
    },
    delete: (uuid) => inner.delete(uuid),
    ready: () => inner.ready?.() ?? true,
    reset: () => inner.reset?.() ?? Promise.resolve(),
  };
  return {
    store,
    failNextUpsert() {
      armed = true;
    },
  };
}

async function listen(listener: ReturnType<typeof toNodeHandler>) {
  const server = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const silent = { update() {}, finish() {} };

function expectCompleted(report: SimulatorSyncReport, what: string): SimulatorSyncReport {
  if (report.completed) return report;
  const stop = report.stoppedAt;
  const answer = stop?.error ?? `status ${stop?.status} ${JSON.stringify(stop?.body ?? "")}`;
  throw new DemoFailure(
    `${what} stopped at ${stop ? describe(stop.message) : "?"}: ${answer}. Expected it to complete.`,
  );
}

function expectStopped(report: SimulatorSyncReport, what: string) {
  if (report.stoppedAt === undefined) {
    throw new DemoFailure(`${what} did not stop the sync, as it should have.`);
  }
  return report.stoppedAt;
}

/** The cycle's first message after the ping: the one it stopped at, sent again. */
function expectResumed(report: SimulatorSyncReport, message: MessageSummary) {
  const resumed = report.delivered[1];
  if (
    resumed === undefined ||
    resumed.message.uuid !== message.uuid ||
    resumed.message.kind !== message.kind
  ) {
    throw new DemoFailure(`The next cycle did not resume with ${describe(message)}.`);
  }
  return resumed;
}

function tally(round: DirectoryChange[], type: DirectoryChange["type"]): number {
  return round.filter((change) => change.type === type).length;
}

function kindOf(change: DirectoryChange): MessageKind {
  return change.type === "add" ? "create" : change.type === "change" ? "modify" : "delete";
}

/** A message for the eye: the kind and the start of the uuid, which is enough to tell users apart. */
function describe({ kind, uuid }: { kind: string; uuid?: string | undefined }): string {
  return uuid === undefined ? kind : `${kind} ${uuid.length > 9 ? `${uuid.slice(0, 8)}…` : uuid}`;
}

function delivered(report: SimulatorSyncReport): number {
  return report.delivered.filter(({ message }) => message.kind !== "ping").length;
}

function rate(report: SimulatorSyncReport, unit: string): string {
  const seconds = Math.max(report.durationMs, 1) / 1000;
  return `${seconds.toFixed(2)} s (${number(Math.round(delivered(report) / seconds))} ${unit}/s)`;
}

const number = new Intl.NumberFormat("en-US").format;

function count(amount: number, noun: string): string {
  return `${number(amount)} ${noun}${amount === 1 ? "" : "s"}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
