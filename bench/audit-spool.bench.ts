// The durable audit modes. Each figure is set against a baseline measured in the same run:
// 1. record() with a spool against record() in memory (goal: within 2x);
// 2. the rate at which the spool makes events durable against the disk's own rate of one
//    write + fdatasync per event (goal: at least 20x, by group commit);
// 3. pg-boss (when PLATFORM_INTEGRATION_PG_URL names a server): events enqueued per second from
//    one process, and delivered per second by two workers, against plain fetch at the same
//    concurrency into the same local server.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAuditClient } from "platform-integration/audit";
import { event, perCall, postWithFetch } from "./audit-measures.ts";

// The spool lives on the disk under test (BENCH_DIR, else the OS's temporary folder).
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "audit-spool-bench-"));

// 1. record(): delivery goes to an in-process fetch between batches, during settle(), for both.
const accepted = async () => new Response(null, { status: 201 });
const memory = createAuditClient({ baseUrl: "http://audit.invalid", fetch: accepted });
const spooled = createAuditClient({
  baseUrl: "http://audit.invalid",
  fetch: accepted,
  spool: join(root, "record"),
});
const recordIn = (client: typeof memory) => (count: number) => {
  for (let index = 0; index < count; index++) client.record(event);
};
const memoryNs = await perCall(recordIn(memory), () => memory.flush(), 300);
const spoolNs = await perCall(recordIn(spooled), () => spooled.flush(), 300);
await Promise.all([memory.close(), spooled.close()]);
console.log(
  `record() with a spool: ${spoolNs.toFixed(0)} ns per event (median); in memory: ${memoryNs.toFixed(0)} ns; ratio ${(spoolNs / memoryNs).toFixed(2)} (goal: at most 2)`,
);

// 2. Durable events per second. Baseline: one 200-byte write and one fdatasync per event, the
// rate a spool without group commit would reach. The spool's rate: events recorded 500 per tick
// (a busy server) while delivery is stalled, until persisted() confirms them all.
const fsyncFile = openSync(join(root, "fsync-probe"), "w");
const record = Buffer.alloc(200, 97);
const fsyncCount = 300;
let start = performance.now();
for (let index = 0; index < fsyncCount; index++) {
  writeSync(fsyncFile, record);
  fdatasyncSync(fsyncFile);
}
const fsyncRate = fsyncCount / ((performance.now() - start) / 1_000);
closeSync(fsyncFile);

const durableEvents = 100_000;
const stalled = createAuditClient({
  baseUrl: "http://audit.invalid",
  // Never answers (delivery stalls), until close() aborts it.
  fetch: (request) =>
    new Promise<Response>((_, reject) => {
      request.signal.addEventListener("abort", () => reject(request.signal.reason));
    }),
  spool: { dir: join(root, "durable"), maxEvents: durableEvents },
});
start = performance.now();
for (let recorded = 0; recorded < durableEvents; recorded += 500) {
  for (let index = 0; index < 500; index++) stalled.record(event);
  await new Promise((resolve) => setImmediate(resolve));
}
const allDurable = await stalled.persisted();
const durableRate = durableEvents / ((performance.now() - start) / 1_000);
await stalled.close({ timeoutMs: 0 });
console.log(
  `durable events/s: ${durableRate.toFixed(0)} with the spool (all confirmed: ${allDurable}); one fdatasync per event: ${fsyncRate.toFixed(0)}/s; ratio ${(durableRate / fsyncRate).toFixed(0)}x (goal: at least 20x)`,
);
rmSync(root, { recursive: true, force: true });

// 3. pg-boss, against a local node:http server answering 201.
const url = process.env.PLATFORM_INTEGRATION_PG_URL;
if (url === undefined) {
  console.log("pg-boss: skipped (set PLATFORM_INTEGRATION_PG_URL to a PostgreSQL server)");
} else {
  await benchPgBoss(url);
}

async function benchPgBoss(connectionString: string): Promise<void> {
  const { PgBoss } = await import("pg-boss");
  const { createPgBossAudit } = await import("platform-integration/audit-pg-boss");
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received++;
      response.writeHead(201, { "content-length": "0" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const schema = `bench_${Date.now().toString(36)}`;
  const bosses = [0, 1, 2].map(
    () => new PgBoss({ connectionString, schema, superviseIntervalSeconds: 60 }),
  );
  for (const boss of bosses) {
    boss.on("error", console.error);
    await boss.start();
  }
  const [producer, ...workers] = await Promise.all(
    bosses.map((boss) => createPgBossAudit({ boss, baseUrl })),
  );
  const events = 5_000;
  const perWorker = 4;

  // Enqueued per second: 10 record() calls at a time (pg-boss's default pool holds 10 connections).
  start = performance.now();
  for (let sent = 0; sent < events; sent += 10) {
    await Promise.all(Array.from({ length: 10 }, () => producer?.record(event)));
  }
  const enqueueRate = events / ((performance.now() - start) / 1_000);

  // Delivered per second by two workers of 4 events at a time each.
  start = performance.now();
  await Promise.all(
    workers.map((worker) => worker.work({ concurrency: perWorker, pollingIntervalSeconds: 0.5 })),
  );
  while (received < events) await new Promise((resolve) => setTimeout(resolve, 20));
  const deliveryRate = events / ((performance.now() - start) / 1_000);
  await Promise.all(workers.map((worker) => worker.stopWork()));

  // Plain fetch at the same concurrency (8 loops), into the same server.
  start = performance.now();
  await postWithFetch(baseUrl, events, 2 * perWorker);
  const fetchRate = events / ((performance.now() - start) / 1_000);
  console.log(`pg-boss enqueue (one process, 10 at a time): ${enqueueRate.toFixed(0)} events/s`);
  console.log(
    `pg-boss delivery (two workers, ${perWorker} each): ${deliveryRate.toFixed(0)} events/s; plain fetch at concurrency ${2 * perWorker}: ${fetchRate.toFixed(0)} requests/s; ratio ${(deliveryRate / fetchRate).toFixed(2)}`,
  );
  for (const boss of bosses) await boss.stop({ graceful: false });
  const { Client } = await import("pg");
  const client = new Client({ connectionString });
  await client.connect();
  await client.query(`DROP SCHEMA ${schema} CASCADE`);
  await client.end();
  server.close();
}
