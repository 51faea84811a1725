// The audit client: what record() costs a request handler, and how fast the queue drains into a
// local Integration API. Each figure is set against a baseline measured in the same run.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAuditClient } from "platform-integration/audit";
import { event, median, perCall, postWithFetch } from "./audit-measures.ts";

// record(): delivery goes to an in-process fetch and happens between batches, during settle().
const accepted = async () => new Response(null, { status: 201 });
const audit = createAuditClient({ baseUrl: "http://audit.invalid", fetch: accepted });
const array: unknown[] = [];
const recordNs = await perCall(
  (count) => {
    for (let index = 0; index < count; index++) audit.record(event);
  },
  () => audit.flush(),
);
const pushNs = await perCall(
  (count) => {
    for (let index = 0; index < count; index++) array.push(event);
  },
  async () => {
    array.length = 0;
  },
);
console.log(
  `record(): ${recordNs.toFixed(0)} ns per event (median); array.push: ${pushNs.toFixed(1)} ns; ratio ${(recordNs / pushNs).toFixed(0)}x`,
);
console.log(`record() budget of 1 us per event: ${recordNs <= 1_000 ? "met" : "MISSED"}`);

// Delivery: events per second into a local node:http server, against plain fetch with the same concurrency.
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(201, { "content-length": "0" }).end());
});
// Past Node's 5 s default, an idle keep-alive socket closed by the server while a loaded client
// reuses it makes plain fetch fail (ECONNRESET) and the SDK retry: neither is what is measured.
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const events = 5_000;
const concurrency = 4;

/** Events per second of wall-clock time, and per second of this process's CPU time. */
async function rate(run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  await run();
  const cpu = process.cpuUsage(cpuStart);
  return {
    wall: events / ((performance.now() - start) / 1_000),
    cpu: events / ((cpu.user + cpu.system) / 1_000_000),
  };
}

const deliverWithSdk = () =>
  rate(async () => {
    const client = createAuditClient({ baseUrl, concurrency });
    for (let index = 0; index < events; index++) client.record(event);
    await client.close({ timeoutMs: 60_000 });
  });
const deliverWithFetch = () => rate(() => postWithFetch(baseUrl, events, concurrency));

// Rounds alternate which goes first, and each round's ratio compares two runs made moments apart:
// on a shared machine, load drifts between rounds far more than within one.
const rounds: { sdk: { wall: number; cpu: number }; fetch: { wall: number; cpu: number } }[] = [];
for (let round = 0; round < 7; round++) {
  if (round % 2 === 0) {
    const sdk = await deliverWithSdk();
    rounds.push({ sdk, fetch: await deliverWithFetch() });
  } else {
    const fetchRate = await deliverWithFetch();
    rounds.push({ sdk: await deliverWithSdk(), fetch: fetchRate });
  }
}
server.close();
const wallRatio = median(rounds.map(({ sdk, fetch }) => sdk.wall / fetch.wall));
const cpuRatio = median(rounds.map(({ sdk, fetch }) => sdk.cpu / fetch.cpu));
console.log(
  `delivery (concurrency ${concurrency}, local node:http): ${median(rounds.map(({ sdk }) => sdk.wall)).toFixed(0)} events/s; plain fetch: ${median(rounds.map(({ fetch }) => fetch.wall)).toFixed(0)} requests/s; ratio ${wallRatio.toFixed(2)} (median of per-round ratios)`,
);
console.log(
  `delivery per CPU second (client and server share this process): ratio ${cpuRatio.toFixed(2)}; per-round wall ratios ${rounds.map(({ sdk, fetch }) => (sdk.wall / fetch.wall).toFixed(2)).join(" ")}`,
);
