// An initial sync as the platform runs it: every user of a generated directory created one at a
// time, in order, over one keep-alive connection, into toNodeHandler over the SQLite store (a
// temporary file), against a bare node:http server that keeps users in a Map. Also
// toNodeHandler over MemoryUserStore, which tells the SDK's share of the cost from SQLite's.
//
// Each server runs in a child process of its own, one after the other, so that its memory is its
// own: it samples its RSS every 10 ms during the sync and reports the peak, next to its RSS when
// idle before the sync (the process with its modules loaded). This process is the load
// generator, the same for all of them.
// The messages are recorded once from the platform simulator, so every server receives the
// platform's exact bodies. `--users N` (default 100,000) for a quicker run.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bareCreateListener } from "./bare-server.ts";

const kinds = {
  bare: "bare node:http + Map",
  memory: "toNodeHandler + MemoryUserStore",
  full: "toNodeHandler + SQLite, synchronous=FULL",
  normal: "toNodeHandler + SQLite, synchronous=NORMAL",
} as const;
type Kind = keyof typeof kinds;

/**
 * What a server process reports: its CPU time so far, its RSS now and at its peak since the last
 * "start", and how many users it holds.
 */
interface ServerReport {
  cpuMicros: number;
  rssBytes: number;
  peakRssBytes: number;
  users: number;
}

if (process.argv[2] === "serve") {
  await serve(process.argv[3] as Kind, process.argv[4] as string);
} else {
  await main();
}

// A server process loads only what its kind needs, so that its idle RSS is its own.
async function serve(kind: Kind, file: string): Promise<void> {
  let listener: Parameters<typeof createServer>[1];
  let count: () => number;
  if (kind === "bare") {
    const users = new Map<string, Record<string, unknown>>();
    listener = bareCreateListener(users);
    count = () => users.size;
  } else {
    const { toNodeHandler } = await import("platform-integration/node");
    const { createProvisioningHandler, MemoryUserStore } = await import(
      "platform-integration/provisioning"
    );
    if (kind === "memory") {
      const store = new MemoryUserStore();
      listener = toNodeHandler(createProvisioningHandler({ store }));
      count = () => store.list().length;
    } else {
      const { SqliteUserStore } = await import("platform-integration/sqlite");
      const store = new SqliteUserStore(file, { synchronous: kind });
      listener = toNodeHandler(createProvisioningHandler({ store }));
      count = () => store.count();
    }
  }
  const server = createServer(listener);
  server.keepAliveTimeout = 60_000;
  let peakRssBytes = 0;
  const sample = () => {
    peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss());
  };
  setInterval(sample, 10).unref();
  process.on("message", (message) => {
    if (message === "start") peakRssBytes = 0;
    sample();
    const { user, system } = process.cpuUsage();
    const report: ServerReport = {
      cpuMicros: user + system,
      rssBytes: process.memoryUsage.rss(),
      peakRssBytes,
      users: count(),
    };
    process.send?.(report);
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { users: { type: "string" } } });
  const users = Number(values.users ?? 100_000);
  if (!Number.isSafeInteger(users) || users < 1) throw new Error("--users takes a whole number");

  const bodies = await recordInitialSync(users);
  const folder = mkdtempSync(join(tmpdir(), "initial-sync-bench-"));
  const results = new Map<
    Kind,
    { seconds: number; cpuMicros: number; idleRssBytes: number; peakRssBytes: number }
  >();
  try {
    // The load generator's own warm-up, on a throwaway server, so that the first server measured
    // does not pay for it.
    const warmUp = await startServer("bare", "");
    await replay(warmUp.port, bodies.slice(0, 5000)).finally(() => warmUp.child.kill());
    for (const kind of Object.keys(kinds) as Kind[]) {
      const server = await startServer(kind, join(folder, `${kind}.db`));
      try {
        const before = await ask(server, "start");
        const started = performance.now();
        await replay(server.port, bodies);
        const seconds = (performance.now() - started) / 1000;
        const after = await ask(server, "report");
        if (after.users !== users) {
          throw new Error(`${kinds[kind]} holds ${after.users} users, not ${users}`);
        }
        const cpuMicros = after.cpuMicros - before.cpuMicros;
        results.set(kind, {
          seconds,
          cpuMicros,
          idleRssBytes: before.rssBytes,
          peakRssBytes: after.peakRssBytes,
        });
      } finally {
        server.child.kill();
      }
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }

  const bare = results.get("bare") as { seconds: number };
  console.log(
    `initial sync of ${users.toLocaleString("en-US")} generated users: one create at a time, ` +
      "in order, over one keep-alive connection",
  );
  const header = ["server", "users/s", "time", "ratio", "CPU/user", "idle RSS", "peak RSS"];
  const mebibytes = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
  const rows = [...results].map(([kind, { seconds, cpuMicros, idleRssBytes, peakRssBytes }]) => [
    kinds[kind],
    Math.round(users / seconds).toLocaleString("en-US"),
    `${seconds.toFixed(1)} s`,
    `${(seconds / bare.seconds).toFixed(2)}x`,
    `${Math.round(cpuMicros / users)} µs`,
    mebibytes(idleRssBytes),
    mebibytes(peakRssBytes),
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
  const ratio = (kind: Kind) => ((results.get(kind)?.seconds ?? 0) / bare.seconds).toFixed(2);
  console.log(
    `SDK with SQLite / bare server, by time: ${ratio("full")}x with synchronous=FULL, ` +
      `${ratio("normal")}x with NORMAL (goal: at most 1.3x)`,
  );
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

async function startServer(kind: Kind, file: string): Promise<RunningServer> {
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      new URL(import.meta.url).pathname,
      "serve",
      kind,
      file,
    ],
    { stdio: ["ignore", "pipe", "inherit", "ipc"] },
  );
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
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
