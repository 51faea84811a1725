// Throughput of a create through toNodeHandler and MemoryUserStore, against a hand-written bare
// node:http handler doing the same work, and handler.fetch on @hono/node-server for scale.
//
// Each server runs in its own child process (one core); this process is the load generator: raw
// keep-alive sockets, each with one request in flight, sending pre-built requests so that the
// generator costs far less per request than any server. Rounds alternate between the servers and
// the median round counts, so that noise from other work on the machine hits both alike.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { connect, type Socket } from "node:net";
import { bareCreateListener } from "./bare-server.ts";

const kinds = {
  bare: "bare node:http handler",
  sdk: "toNodeHandler + MemoryUserStore",
  hono: "handler.fetch on @hono/node-server",
} as const;
type Kind = keyof typeof kinds;

const connections = 16;
/** Requests each connection keeps in flight (HTTP/1.1 pipelining, as autocannon's -p). */
const pipelined = 4;
const marker = Buffer.from("HTTP/1.1 ");
const statusLine = Buffer.from("HTTP/1.1 201 ");
const distinctUsers = 1000;
const roundSeconds = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

if (process.argv[2] === "serve") {
  await serve(process.argv[3] as Kind);
} else {
  await main();
}

async function serve(kind: Kind): Promise<void> {
  const dist = new URL("../dist/", import.meta.url);
  const { createProvisioningHandler, MemoryUserStore } = await import(
    new URL("provisioning/index.js", dist).href
  );
  const handler = createProvisioningHandler({ store: new MemoryUserStore() });
  let server: ReturnType<typeof createServer>;
  if (kind === "sdk") {
    const { toNodeHandler } = await import(new URL("node/index.js", dist).href);
    server = createServer(toNodeHandler(handler));
  } else if (kind === "hono") {
    const { createAdaptorServer } = await import("@hono/node-server");
    server = createAdaptorServer({ fetch: handler.fetch }) as ReturnType<typeof createServer>;
  } else {
    server = createServer(bareCreateListener());
  }
  server.keepAliveTimeout = 60_000;
  // The parent asks for this process's CPU time around each round: requests per CPU-second is
  // what one dedicated core would serve, whatever else the machine is doing.
  process.on("message", () => {
    const { user, system } = process.cpuUsage();
    process.send?.(user + system);
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
  });
}

async function main(): Promise<void> {
  const requests = Array.from({ length: distinctUsers }, (_, index) => {
    const body = JSON.stringify({
      uuid: `97e86d2d-b076-4d87-b4f6-${String(index).padStart(12, "0")}`,
      username: `bob${index}`,
      first_name: "Bob",
      password: "password123",
      email: `bob${index}@acmecorp.com`,
    });
    return Buffer.from(
      `POST /v1/user/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  const servers = new Map<Kind, Server>();
  for (const kind of Object.keys(kinds) as Kind[]) servers.set(kind, await startServer(kind));
  try {
    const results = new Map<Kind, { wall: number[]; cpu: number[] }>();
    for (const server of servers.values()) await measure(server, requests, 1); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = [...servers.keys()];
      if (round % 2 === 1) order.reverse();
      for (const kind of order) {
        const { wall, cpu } = await measure(servers.get(kind) as Server, requests, roundSeconds);
        const result = results.get(kind) ?? { wall: [], cpu: [] };
        result.wall.push(wall);
        result.cpu.push(cpu);
        results.set(kind, result);
      }
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] as number;
    const medians = new Map(
      [...results].map(([kind, { wall, cpu }]) => [kind, { wall: median(wall), cpu: median(cpu) }]),
    );
    const bare = medians.get("bare") as { wall: number; cpu: number };
    console.log(
      `create, ${connections} keep-alive connections with ${pipelined} requests in flight each, ` +
        `median of ${rounds} rounds of ${roundSeconds} s`,
    );
    console.log(`${"".padEnd(36)} ${"req/s".padStart(7)} ratio  ${"req/CPU-s".padStart(9)} ratio`);
    for (const [kind, { wall, cpu }] of medians) {
      console.log(
        `${kinds[kind].padEnd(36)} ${String(Math.round(wall)).padStart(7)} ${(wall / bare.wall).toFixed(2).padStart(5)}` +
          `  ${String(Math.round(cpu)).padStart(9)} ${(cpu / bare.cpu).toFixed(2).padStart(5)}`,
      );
    }
    const sdk = medians.get("sdk") as { wall: number; cpu: number };
    console.log(
      `toNodeHandler / bare: ${(sdk.wall / bare.wall).toFixed(2)} by throughput, ` +
        `${(sdk.cpu / bare.cpu).toFixed(2)} by server CPU time (goal: at least 0.90)`,
    );
  } finally {
    for (const { child } of servers.values()) child.kill();
  }
}

interface Server {
  child: ChildProcess;
  port: number;
}

async function startServer(kind: Kind): Promise<Server> {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "serve", kind], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { child, port: Number(chunk.toString().trim()) };
}

/** The server's CPU time so far, in seconds. */
async function cpuSeconds({ child }: Server): Promise<number> {
  child.send("cpu");
  const [micros] = (await once(child, "message")) as [number];
  return micros / 1e6;
}

/** One round: 201s per second of wall time, and per second of the server's CPU time. */
async function measure(server: Server, requests: Buffer[], seconds: number) {
  const before = await cpuSeconds(server);
  const { rate, total } = await load(server.port, requests, seconds);
  const cpu = (await cpuSeconds(server)) - before;
  return { wall: rate, cpu: total / cpu };
}

/**
 * Sends requests for `seconds` over the connections. `rate` counts the 201s within the window;
 * `total` also those in flight when it closed, which the server's CPU time includes.
 */
async function load(
  port: number,
  requests: Buffer[],
  seconds: number,
): Promise<{ rate: number; total: number }> {
  let next = 0;
  let completed = 0;
  let failed = 0;
  let running = true;
  const sockets: Socket[] = [];
  const finished: Promise<void>[] = [];
  for (let index = 0; index < connections; index++) {
    const socket = connect(port, "127.0.0.1");
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
