// Throughput of a create through toNodeHandler and MemoryUserStore, against a hand-written bare
// node:http handler doing the same work (bare-server.ts); and of handler.fetch on
// @hono/node-server against a bare Web fetch handler doing that work on the same server.
// Two load shapes, each run on all three servers in this run, rounds alternating between the
// servers and the median round counting, so that noise from other work hits them alike:
//
// 1. In process: the servers and the load generator share this process, the generator being a
//    loop of keep-alive node:http requests, 32 at a time (the platform's own client is an HTTP
//    client too). Requests per second, and the ratio to bare: the goal is at least 0.90.
// 2. Server alone: each server in a child process, loaded from here by raw sockets that keep 4
//    pipelined requests in flight on each of 16 connections, so that the server, not the
//    generator, is the bottleneck. Requests per second and per second of the server's CPU time:
//    the strict measure of what the SDK adds to the server's own work.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, createServer, request, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { bareCreateFetch, bareCreateListener } from "./bare-server.ts";

const kinds = {
  bare: "bare node:http handler",
  sdk: "toNodeHandler + MemoryUserStore",
  hono: "handler.fetch on @hono/node-server",
  bareFetch: "bare fetch handler on @hono/node-server",
} as const;
type Kind = keyof typeof kinds;
/** Each server's baseline: the bare handler of its own kind, on the same server. */
const baselineOf: Record<Kind, Kind> = {
  bare: "bare",
  sdk: "bare",
  hono: "bareFetch",
  bareFetch: "bare",
};

const roundSeconds = Number(process.env.BENCH_ROUND_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const bodies = Array.from({ length: 1000 }, (_, index) =>
  JSON.stringify({
    uuid: `97e86d2d-b076-4d87-b4f6-${String(index).padStart(12, "0")}`,
    username: `bob${index}`,
    first_name: "Bob",
    password: "password123",
    email: `bob${index}@acmecorp.com`,
  }),
);

const requests = bodies.map((body) =>
  Buffer.from(
    `POST /v1/user/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  ),
);
const marker = Buffer.from("HTTP/1.1 ");
const statusLine = Buffer.from("HTTP/1.1 201 ");

if (process.argv[2] === "serve") await serveAlone(process.argv[3] as Kind);
else await main();

async function main(): Promise<void> {
  console.log(`create, median of ${rounds} rounds of ${roundSeconds} s per server\n`);
  const inProcess = new Map<Kind, Server>();
  for (const kind of Object.keys(kinds) as Kind[]) {
    const server = await createKindServer(kind);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    inProcess.set(kind, server);
  }
  const clientRates = await compare(inProcess, async (server, seconds) => ({
    wall: await loadWithClient(port(server), seconds),
  }));
  for (const server of inProcess.values()) server.close();
  report("1. in process, 32 keep-alive node:http requests at a time", clientRates);

  const alone = new Map<Kind, ChildServer>();
  for (const kind of Object.keys(kinds) as Kind[]) alone.set(kind, await startChild(kind));
  try {
    const socketRates = await compare(alone, async (server, seconds) => {
      const before = await cpuSeconds(server);
      const { rate, total } = await loadWithSockets(server.port, seconds);
      return { wall: rate, cpu: total / ((await cpuSeconds(server)) - before) };
    });
    report("2. server alone, 16 connections x 4 pipelined requests, raw sockets", socketRates);
  } finally {
    for (const { child } of alone.values()) child.kill();
  }
}

interface Rates {
  wall: number;
  cpu?: number;
}

/** Runs alternating rounds on every server and keeps each one's median rates. */
async function compare<S>(
  servers: Map<Kind, S>,
  measure: (server: S, seconds: number) => Promise<Rates>,
): Promise<Map<Kind, Rates>> {
  for (const server of servers.values()) await measure(server, 1); // warm-up
  const results = new Map<Kind, Rates[]>();
  for (let round = 0; round < rounds; round++) {
    const order = [...servers.keys()];
    if (round % 2 === 1) order.reverse();
    for (const kind of order) {
      const rates = await measure(servers.get(kind) as S, roundSeconds);
      results.set(kind, [...(results.get(kind) ?? []), rates]);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] as number;
  return new Map(
    [...results].map(([kind, all]) => {
      const cpu = all.flatMap((rates) => (rates.cpu === undefined ? [] : [rates.cpu]));
      return [
        kind,
        {
          wall: median(all.map((rates) => rates.wall)),
          ...(cpu.length ? { cpu: median(cpu) } : {}),
        },
      ];
    }),
  );
}

function report(title: string, rates: Map<Kind, Rates>): void {
  const cpu = (rates.get("bare") as Rates).cpu !== undefined;
  console.log(title);
  console.log(
    `  ${"".padEnd(40)} ${"req/s".padStart(7)} ratio${cpu ? `  ${"req/CPU-s".padStart(9)} ratio` : ""}  (ratio to)`,
  );
  for (const [kind, { wall, cpu: perCpu }] of rates) {
    const base = rates.get(baselineOf[kind]) as Rates;
    const cpuColumns =
      perCpu === undefined || base.cpu === undefined
        ? ""
        : `  ${String(Math.round(perCpu)).padStart(9)} ${(perCpu / base.cpu).toFixed(2).padStart(5)}`;
    console.log(
      `  ${kinds[kind].padEnd(40)} ${String(Math.round(wall)).padStart(7)} ${(wall / base.wall).toFixed(2).padStart(5)}${cpuColumns}  (${baselineOf[kind]})`,
    );
  }
  console.log();
}

async function createKindServer(kind: Kind): Promise<Server> {
  const dist = new URL("../dist/", import.meta.url);
  const { createProvisioningHandler, MemoryUserStore } = await import(
    new URL("provisioning/index.js", dist).href
  );
  const handler = createProvisioningHandler({ store: new MemoryUserStore() });
  let server: Server;
  if (kind === "sdk") {
    const { toNodeHandler } = await import(new URL("node/index.js", dist).href);
    server = createServer(toNodeHandler(handler));
  } else if (kind === "hono") {
    const { createAdaptorServer } = await import("@hono/node-server");
    server = createAdaptorServer({ fetch: handler.fetch }) as Server;
  } else if (kind === "bareFetch") {
    const { createAdaptorServer } = await import("@hono/node-server");
    server = createAdaptorServer({ fetch: bareCreateFetch() }) as Server;
  } else {
    server = createServer(bareCreateListener());
  }
  server.keepAliveTimeout = 60_000;
  return server;
}

function port(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** Creates for `seconds`, 32 requests at a time over keep-alive connections; answers per second. */
async function loadWithClient(serverPort: number, seconds: number): Promise<number> {
  const concurrency = 32;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  let completed = 0;
  let running = true;
  const create = () =>
    new Promise<void>((resolve, reject) => {
      const body = bodies[next++ % bodies.length] as string;
      const req = request(
        {
          host: "127.0.0.1",
          port: serverPort,
          path: "/v1/user/create",
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          if (res.statusCode !== 201) reject(new Error(`answered ${res.statusCode}`));
          res.resume().on("end", resolve);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const worker = async () => {
    while (running) {
      await create();
      completed++;
    }
  };
  const started = performance.now();
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  running = false;
  const rate = completed / ((performance.now() - started) / 1000);
  await Promise.all(workers);
  agent.destroy();
  return rate;
}

interface ChildServer {
  child: ChildProcess;
  port: number;
}

async function serveAlone(kind: Kind): Promise<void> {
  const server = await createKindServer(kind);
  // The parent asks for this process's CPU time around each round: requests per CPU-second is
  // what one dedicated core would serve, whatever else the machine is doing.
  process.on("message", () => {
    const { user, system } = process.cpuUsage();
    process.send?.(user + system);
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${port(server)}\n`));
}

async function startChild(kind: Kind): Promise<ChildServer> {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "serve", kind], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { child, port: Number(chunk.toString().trim()) };
}

/** The server's CPU time so far, in seconds. */
async function cpuSeconds({ child }: ChildServer): Promise<number> {
  child.send("cpu");
  const [micros] = (await once(child, "message")) as [number];
  return micros / 1e6;
}

/**
 * Sends pre-built requests for `seconds`. `rate` counts the 201s within the window; `total` also
 * those in flight when it closed, which the server's CPU time includes.
 */
async function loadWithSockets(
  serverPort: number,
  seconds: number,
): Promise<{ rate: number; total: number }> {
  const connections = 16;
  const pipelined = 4;
  let next = 0;
  let completed = 0;
  let failed = 0;
  let running = true;
  const sockets: Socket[] = [];
  const finished: Promise<void>[] = [];
  for (let index = 0; index < connections; index++) {
    const socket = connect(serverPort, "127.0.0.1");
    socket.setNoDelay(true);
    sockets.push(socket);
    await once(socket, "connect");
    let carry: Buffer = Buffer.alloc(0);
    let inFlight = 0;
    // As many requests as were just answered, in one write: the generator stays cheap.
    const send = (count: number) => {
      const batch: Buffer[] = [];
      for (let sent = 0; sent < count; sent++)
        batch.push(requests[next++ % requests.length] as Buffer);
      socket.write(count === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
      inFlight += count;
    };
    let done: () => void = () => {};
    finished.push(
      new Promise((resolve) => {
        done = resolve;
      }),
    );
    // Answers are bodiless (or, chunked from Hono, an empty last chunk), so counting status lines
    // counts answers; a status line split between two reads is kept for the next.
    socket.on("data", (chunk: Buffer) => {
      const data = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
      let answered = 0;
      let keepFrom = Math.max(0, data.length - statusLine.length);
      for (
        let at = data.indexOf(marker);
        at !== -1;
        at = data.indexOf(marker, at + statusLine.length)
      ) {
        if (at + statusLine.length > data.length) {
          keepFrom = at;
          break;
        }
        if (data.subarray(at, at + statusLine.length).equals(statusLine)) completed++;
        else failed++;
        answered++;
        keepFrom = Math.max(keepFrom, at + statusLine.length);
      }
      carry = data.subarray(keepFrom);
      inFlight -= answered;
      if (running && answered > 0) send(answered);
      else if (!running && inFlight === 0) done();
    });
    send(pipelined);
  }
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  running = false;
  const counted = completed;
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(finished);
  for (const socket of sockets) socket.destroy();
  if (failed > 0) throw new Error(`${failed} answers were not 201`);
  return { rate: counted / elapsed, total: completed };
}
