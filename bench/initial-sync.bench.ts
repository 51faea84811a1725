// An initial sync as the platform runs it: every user of a generated directory created one at a
// time, in order, over one keep-alive connection. Each durable SDK server is measured against a
// bare node:http server doing the same database writes by hand, on the same database settings:
//
// - SQLite, synchronous=FULL and NORMAL: toNodeHandler + SqliteUserStore, against node:http +
//   one prepared INSERT through node:sqlite, same pragmas;
// - PostgreSQL (with --pg-url or PLATFORM_INTEGRATION_PG_URL): toNodeHandler + PostgresUserStore,
//   against node:http + the store's own upsert statement through pg;
// - SQLite with the quarantine on (unique username and email): the same servers, against the bare
//   twin on a table with the same unique indexes;
// - for scale, the SDK over MemoryUserStore against node:http + a Map (bench/bare-server.ts).
//
// (a) is the ratio of the SDK's time to its bare twin's (goal: at most 1.10x). (b) is the disk's
// fsync time, measured here, and the FULL sync's rate as a fraction of the rate one fsync per user
// allows: each acknowledged user is one commit, and the platform waits for each answer, so with
// FULL nothing can be batched.
//
// Each server runs alone in a child process, the pairs in alternating rounds (the median ratio
// is reported), so that the machine's other work hits both alike; this process is the load
// generator. The bodies are recorded once from the platform simulator. `--users N` (default
// 20,000) and `--rounds N` (default 3) size the run; `--only full,normal` measures only those
// SDK servers and their twins. `--before DIST` adds, for the SQLite servers, the same server on
// another build of the package (a copy of dist/ from an earlier commit), in the same rounds: a
// before/after comparison that the machine's load hits alike (keep the copy where it resolves the
// same node_modules, @opentelemetry/api among them: inside the repository, or beside a link to
// them). With BENCH_CPU_PROF=DIR, each SDK
// server writes a V8 CPU profile there (node --cpu-prof).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { Agent, createServer, type RequestListener, request } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bareCreateListener, mergeInto } from "./bare-server.ts";

const kinds = {
  "bare-map": "bare node:http + Map",
  memory: "toNodeHandler + MemoryUserStore",
  "bare-full": "bare node:http + SQLite INSERT, FULL",
  full: "toNodeHandler + SqliteUserStore, FULL",
  "bare-normal": "bare node:http + SQLite INSERT, NORMAL",
  normal: "toNodeHandler + SqliteUserStore, NORMAL",
  "full-before": "the same, FULL, on the --before build",
  "normal-before": "the same, NORMAL, on the --before build",
  "bare-full-unique": "bare node:http + SQLite INSERT, FULL, unique username and email",
  "full-quarantine": "toNodeHandler + SqliteUserStore, FULL, unique + quarantine",
  "bare-normal-unique": "bare node:http + SQLite INSERT, NORMAL, unique username and email",
  "normal-quarantine": "toNodeHandler + SqliteUserStore, NORMAL, unique + quarantine",
  "full-quarantine-before": "the same, FULL, unique + quarantine, on the --before build",
  "normal-quarantine-before": "the same, NORMAL, unique + quarantine, on the --before build",
  "bare-pg": "bare node:http + pg, the same upsert",
  pg: "toNodeHandler + PostgresUserStore",
} as const;
type Kind = keyof typeof kinds;
/** Each SDK server and its bare twin. */
const pairs: [sdk: Kind, bare: Kind][] = [
  ["memory", "bare-map"],
  ["full", "bare-full"],
  ["normal", "bare-normal"],
  ["full-quarantine", "bare-full-unique"],
  ["normal-quarantine", "bare-normal-unique"],
  ["pg", "bare-pg"],
];
/** The unique fields of the quarantine servers and of their twins' tables. */
const uniqueFields = ["username", "email"] as const;
/** The SDK servers on the --before build, each beside its current twin in the same round. */
const beforePairs: [sdk: Kind, bare: Kind][] = [
  ["full-before", "bare-full"],
  ["normal-before", "bare-normal"],
  ["full-quarantine-before", "bare-full-unique"],
  ["normal-quarantine-before", "bare-normal-unique"],
];

/** Where an SDK server imports the package from: this build, or the --before one. */
function sdkModule(kind: Kind, subpath: "node" | "provisioning" | "sqlite"): string {
  const before = process.env.BENCH_BEFORE_DIST;
  return kind.endsWith("-before") && before
    ? new URL(`${subpath}/index.js`, `file://${before.replace(/\/?$/, "/")}`).href
    : `platform-integration/${subpath}`;
}

/** What a server process reports: CPU time so far, RSS peak since "start", users held. */
interface ServerReport {
  cpuMicros: number;
  peakRssBytes: number;
  users: number;
}

// A server process loads only what its kind needs.
async function serve(kind: Kind, target: string): Promise<void> {
  const { listener, count } = await listenerOf(kind, target);
  const server = createServer(listener);
  server.keepAliveTimeout = 60_000;
  let peakRssBytes = 0;
  const sample = () => {
    peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss());
  };
  setInterval(sample, 10).unref();
  // A signal would end the process before --cpu-prof writes its profile; an exit lets it.
  process.once("SIGTERM", () => process.exit(0));
  process.on("message", async (message) => {
    if (message === "start") peakRssBytes = 0;
    sample();
    const { user, system } = process.cpuUsage();
    const report: ServerReport = { cpuMicros: user + system, peakRssBytes, users: await count() };
    process.send?.(report);
  });
  // A handler starts loading @opentelemetry/api when it is created, in the background (35-50 ms of
  // CPU, once per process, whatever it then serves). The clock starts once the server listens, so
  // that import is awaited first: the runs count the creates, not the process's start-up.
  await import("@opentelemetry/api").catch(() => undefined);
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
}

/** The server of a kind, on the SQLite file or PostgreSQL table `target`. */
async function listenerOf(
  kind: Kind,
  target: string,
): Promise<{ listener: RequestListener; count: () => number | Promise<number> }> {
  if (kind === "bare-map") {
    const users = new Map<string, Record<string, unknown>>();
    return { listener: bareCreateListener(mergeInto(users)), count: () => users.size };
  }
  if (kind.startsWith("bare-full") || kind.startsWith("bare-normal")) {
    return bareSqlite(kind, target);
  }
  if (kind === "bare-pg") return barePostgres(target);
  const { toNodeHandler } = (await import(
    sdkModule(kind, "node")
  )) as typeof import("platform-integration/node");
  const { createProvisioningHandler, MemoryUserStore } = (await import(
    sdkModule(kind, "provisioning")
  )) as typeof import("platform-integration/provisioning");
  if (kind === "memory") {
    const store = new MemoryUserStore();
    return {
      listener: toNodeHandler(createProvisioningHandler({ store })),
      count: () => store.count(),
    };
  }
  if (kind === "pg") {
    const { PostgresUserStore } = await import("platform-integration/postgres");
    const store = new PostgresUserStore({ pool: await pgPool(), table: target });
    return {
      listener: toNodeHandler(createProvisioningHandler({ store })),
      count: () => store.count(),
    };
  }
  const { SqliteUserStore } = (await import(
    sdkModule(kind, "sqlite")
  )) as typeof import("platform-integration/sqlite");
  const quarantine = kind.includes("-quarantine");
  const store = new SqliteUserStore(target, {
    synchronous: kind.startsWith("full") ? "full" : "normal",
    ...(quarantine ? { unique: uniqueFields } : {}),
  });
  return {
    listener: toNodeHandler(createProvisioningHandler({ store, quarantine })),
    count: () => store.count(),
  };
}

// The wire's documented fields and their columns (the same in both stores' tables).
const columns = {
  user_id: "user_id",
  username: "username",
  first_name: "first_name",
  last_name: "last_name",
  full_name: "full_name",
  password_format: "password_format",
  password: "password",
  email: "email",
} as const;
const camel = (wire: string) =>
  wire.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** node:sqlite by hand: SqliteUserStore's table and pragmas, one INSERT with every column. */
async function bareSqlite(kind: Kind, file: string) {
  const { DatabaseSync } = await import("node:sqlite");
  // The store creates the table and sets the file up; the bare server then opens it alone.
  const { SqliteUserStore } = await import("platform-integration/sqlite");
  new SqliteUserStore(file, kind.endsWith("-unique") ? { unique: uniqueFields } : {}).close();
  const db = new DatabaseSync(file);
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${kind.startsWith("bare-full") ? "FULL" : "NORMAL"}`);
  db.exec("PRAGMA wal_autocheckpoint = 10000");
  const names = Object.values(columns);
  const insert = db.prepare(
    `INSERT INTO provisioned_users (uuid, ${names.join(", ")}, extra)
     VALUES (${["uuid", ...names, "extra"].map(() => "?").join(", ")})
     ON CONFLICT (uuid) DO NOTHING`,
  );
  const count = db.prepare("SELECT count(*) AS users FROM provisioned_users");
  const listener = bareCreateListener((record) => {
    const values: (string | null)[] = [record.uuid];
    for (const wire of Object.keys(columns)) {
      const value = record[wire];
      values.push(
        value === undefined || value === null
          ? null
          : typeof value === "string"
            ? value
            : JSON.stringify(value),
      );
    }
    const extra: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      if (key !== "uuid" && !(key in columns) && record[key] !== null) extra[key] = record[key];
    }
    values.push(Object.keys(extra).length > 0 ? JSON.stringify(extra) : null);
    if (Number(insert.run(...values).changes) !== 1) throw new Error("not created");
  });
  return { listener, count: () => Number((count.get() as { users: number }).users) };
}

/** pg by hand: PostgresUserStore's own upsert statement, bound to the record in camelCase. */
async function barePostgres(table: string) {
  const pool = await pgPool();
  const { PostgresUserStore } = await import("platform-integration/postgres");
  // The statement, as the store sends it: caught by a pool that only records.
  let upsert = "";
  const recorder = {
    query: async (text: string) => {
      upsert = text;
      return { rows: [{ uuid: "" }] };
    },
  };
  await new PostgresUserStore({ pool: recorder as never, table }).upsert({ uuid: "" });
  const listener = bareCreateListener(async (record) => {
    const patch: Record<string, unknown> = { uuid: record.uuid };
    const extra: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      if (key === "uuid") continue;
      if (key in columns)
        patch[camel(key)] = typeof value === "string" ? value : JSON.stringify(value);
      else extra[key] = value;
    }
    if (Object.keys(extra).length > 0) patch.extra = extra;
    await pool.query(upsert, [JSON.stringify(patch)]);
  });
  const count = async () =>
    Number((await pool.query(`SELECT count(*) AS users FROM "${table}"`)).rows[0].users);
  return { listener, count };
}

async function pgPool() {
  const { default: pg } = await import("pg");
  return new pg.Pool({ connectionString: process.env.PLATFORM_INTEGRATION_PG_URL });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: "string" },
      rounds: { type: "string" },
      "pg-url": { type: "string" },
      only: { type: "string" },
      before: { type: "string" },
    },
  });
  const users = Number(values.users ?? 20_000);
  const rounds = Number(values.rounds ?? 3);
  if (!Number.isSafeInteger(users) || users < 1) throw new Error("--users takes a whole number");
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error("--rounds takes a whole number");
  const pgUrl = values["pg-url"] ?? process.env.PLATFORM_INTEGRATION_PG_URL;
  if (pgUrl) process.env.PLATFORM_INTEGRATION_PG_URL = pgUrl;
  const only = values.only?.split(",");
  if (values.before) process.env.BENCH_BEFORE_DIST = values.before;
  const measured = [...pairs, ...(values.before ? beforePairs : [])].filter(
    ([sdk]) =>
      (sdk !== "pg" || pgUrl) && (only === undefined || only.includes(sdk.replace(/-before$/, ""))),
  );

  const bodies = await recordInitialSync(users);
  const folder = mkdtempSync(join(tmpdir(), "initial-sync-bench-"));
  const fsyncMicros = measureFsync(folder);
  const runs = new Map<Kind, Run[]>();
  const tables: string[] = [];
  try {
    const warmUp = await startServer("bare-map", "");
    await replay(warmUp.port, bodies.slice(0, 5000)).finally(() => warmUp.child.kill());
    for (let round = 0; round < rounds; round++) {
      for (const pair of measured) {
        // Alternate which of the two goes first, round by round; a bare twin that a --before
        // server shares runs once a round.
        for (const kind of round % 2 ? [...pair].reverse() : pair) {
          if ((runs.get(kind)?.length ?? 0) > round) continue;
          const target = kind.endsWith("pg")
            ? await newTable(tables)
            : join(folder, `${kind}-${round}.db`);
          const run = await measure(kind, target, bodies);
          runs.set(kind, [...(runs.get(kind) ?? []), run]);
          if (!kind.endsWith("pg")) {
            for (const suffix of ["", "-wal", "-shm"]) rmSync(target + suffix, { force: true });
          }
        }
      }
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
    if (tables.length > 0) await dropTables(tables);
  }
  report({ users, rounds, runs, measured, fsyncMicros, pgSettings: pgUrl && (await pgSettings()) });
}

interface Run {
  seconds: number;
  cpuMicros: number;
  peakRssBytes: number;
}

async function measure(kind: Kind, target: string, bodies: Buffer[]): Promise<Run> {
  const server = await startServer(kind, target);
  try {
    const before = await ask(server, "start");
    const started = performance.now();
    await replay(server.port, bodies);
    const seconds = (performance.now() - started) / 1000;
    const after = await ask(server, "report");
    if (after.users !== bodies.length) {
      throw new Error(`${kinds[kind]} holds ${after.users} users, not ${bodies.length}`);
    }
    return {
      seconds,
      cpuMicros: after.cpuMicros - before.cpuMicros,
      peakRssBytes: after.peakRssBytes,
    };
  } finally {
    server.child.kill();
    await once(server.child, "exit");
  }
}

/**
 * The disk's time for one durable commit of a small write, in the folder where the databases
 * live: the median of 300 rounds of a 4 KiB write and fdatasync, once overwriting a file in place
 * and once appending to it. SQLite's WAL grows by appends until a checkpoint lets it start over,
 * and an fdatasync that must also record a new file size costs more on most file systems.
 */
function measureFsync(folder: string): { inPlace: number; append: number } {
  const probe = (append: boolean) => {
    const file = join(folder, "fsync-probe");
    const fd = openSync(file, "w");
    const page = Buffer.alloc(4096, 1);
    const times: number[] = [];
    try {
      for (let index = 0; index < 300; index++) {
        const started = performance.now();
        writeSync(fd, page, 0, page.length, (append ? index : index % 16) * page.length);
        fdatasyncSync(fd);
        times.push((performance.now() - started) * 1000);
      }
    } finally {
      closeSync(fd);
      rmSync(file, { force: true });
    }
    return median(times);
  };
  return { inPlace: probe(false), append: probe(true) };
}

function report({
  users,
  rounds,
  runs,
  measured,
  fsyncMicros,
  pgSettings,
}: {
  users: number;
  rounds: number;
  runs: Map<Kind, Run[]>;
  measured: [Kind, Kind][];
  fsyncMicros: { inPlace: number; append: number };
  pgSettings: string | undefined;
}): void {
  const mid = (kind: Kind, of: (run: Run) => number) => median((runs.get(kind) ?? []).map(of));
  console.log(
    `initial sync of ${users.toLocaleString("en-US")} generated users, one create at a time over ` +
      `one keep-alive connection; median of ${rounds} round(s); load average at the end ` +
      `${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} CPUs`,
  );
  const header = ["server", "users/s", "time", "CPU/user", "peak RSS"];
  const rows = measured
    .flat()
    .map((kind) => [
      kinds[kind],
      Math.round(users / mid(kind, (run) => run.seconds)).toLocaleString("en-US"),
      `${mid(kind, (run) => run.seconds).toFixed(2)} s`,
      `${Math.round(mid(kind, (run) => run.cpuMicros) / users)} µs`,
      `${Math.round(mid(kind, (run) => run.peakRssBytes) / 2 ** 20)} MiB`,
    ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  );
  for (const row of [header, ...rows]) {
    console.log(
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[0] as number) : cell.padStart(widths[column] as number),
        )
        .join("  "),
    );
  }
  console.log(
    "\n(a) SDK / bare server doing the same writes, by time (median of per-round ratios):",
  );
  for (const [sdk, bare] of measured) {
    const ratios = (runs.get(sdk) ?? []).map(
      (run, round) => run.seconds / ((runs.get(bare) ?? [])[round] as Run).seconds,
    );
    const goal = sdk === "memory" ? "for scale" : "goal: at most 1.10x";
    console.log(
      `    ${kinds[sdk]}: ${median(ratios).toFixed(2)}x (rounds: ${ratios.map((ratio) => ratio.toFixed(2)).join(", ")}; ${goal})`,
    );
  }
  const ceiling = 1e6 / fsyncMicros.append;
  console.log(
    `\n(b) fdatasync after a 4 KiB write: ${Math.round(fsyncMicros.inPlace)} µs in place, ` +
      `${Math.round(fsyncMicros.append)} µs appending (medians of 300, before the runs); one ` +
      `appending fsync per user allows at most ${Math.round(ceiling).toLocaleString("en-US")} users/s`,
  );
  for (const kind of [
    ...(measured.some(([sdk]) => sdk === "full") ? (["full", "bare-full"] as const) : []),
    ...(measured.some(([sdk]) => sdk === "pg") ? (["pg", "bare-pg"] as const) : []),
  ] as Kind[]) {
    const rate = users / mid(kind, (run) => run.seconds);
    console.log(`    ${kinds[kind]}: ${(rate / ceiling).toFixed(2)} of that rate`);
  }
  if (pgSettings) console.log(`    PostgreSQL: ${pgSettings}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function newTable(tables: string[]): Promise<string> {
  const table = `bench_initial_sync_${process.pid}_${tables.length}`;
  tables.push(table);
  const pool = await pgPool();
  try {
    const { PostgresUserStore } = await import("platform-integration/postgres");
    await new PostgresUserStore({ pool, table }).migrate();
  } finally {
    await pool.end();
  }
  return table;
}

async function dropTables(tables: string[]): Promise<void> {
  const pool = await pgPool();
  try {
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await pool.end();
  }
}

async function pgSettings(): Promise<string> {
  const pool = await pgPool();
  try {
    const setting = async (name: string) =>
      (await pool.query(`SELECT current_setting('${name}') AS value`)).rows[0].value as string;
    return `fsync=${await setting("fsync")}, synchronous_commit=${await setting("synchronous_commit")}, wal_sync_method=${await setting("wal_sync_method")}, server on the same disk`;
  } finally {
    await pool.end();
  }
}

/** The initial sync's create bodies, exactly as the platform simulator sends them. */
async function recordInitialSync(users: number): Promise<Buffer[]> {
  const { createPlatformSimulator, createUserGenerator } = await import(
    "platform-integration/testing"
  );
  const bodies: Buffer[] = [];
  const platform = createPlatformSimulator({
    target: {
      fetch: async (message) => {
        if (message.method === "GET") return new Response(null, { status: 204 });
        if (new URL(message.url).pathname !== "/v1/user/create") {
          throw new Error(`An initial sync sends creates, not ${message.method} ${message.url}`);
        }
        bodies.push(Buffer.from(await message.text()));
        return new Response(null, { status: 201 });
      },
    },
  });
  for (const user of createUserGenerator({ seed: 1 }).users(users)) platform.addUser(user);
  const report = await platform.sync();
  if (!report.completed || bodies.length !== users) throw new Error("Recording the sync failed");
  return bodies;
}

interface RunningServer {
  child: ChildProcess;
  port: number;
}

async function startServer(kind: Kind, target: string): Promise<RunningServer> {
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      ...(process.env.BENCH_CPU_PROF
        ? [
            "--cpu-prof",
            `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`,
            `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`,
          ]
        : []),
      new URL(import.meta.url).pathname,
      "serve",
      kind,
      target,
    ],
    { stdio: ["ignore", "pipe", "inherit", "ipc"] },
  );
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`The ${kinds[kind]} server exited (${code}) before listening`);
  });
  const [chunk] = (await Promise.race([
    once(child.stdout as NodeJS.ReadableStream, "data"),
    exited,
  ])) as [Buffer];
  exited.catch(() => {});
  return { child, port: Number(chunk.toString().trim()) };
}

async function ask({ child }: RunningServer, what: "start" | "report"): Promise<ServerReport> {
  child.send(what);
  const [report] = (await once(child, "message")) as [ServerReport];
  return report;
}

/** Posts each body in turn, the next once the previous is answered, as the platform does. */
async function replay(port: number, bodies: Buffer[]): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const body of bodies) {
      const status = await post(agent, port, body);
      if (status !== 201) throw new Error(`A create answered ${status}, not 201`);
    }
  } finally {
    agent.destroy();
  }
}

function post(agent: Agent, port: number, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/v1/user/create",
        headers: { "content-type": "application/json", "content-length": body.byteLength },
      },
      (response) => {
        response.resume();
        response.once("end", () => resolve(response.statusCode ?? 0));
        response.once("error", reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(body);
  });
}

// Last, once every module-level constant above is initialized.
if (process.argv[2] === "serve") {
  await serve(process.argv[3] as Kind, process.argv[4] as string);
} else {
  await main();
}
