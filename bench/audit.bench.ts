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
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const events = 5_000;
const concurrency = 4;

async function rate(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return events / ((performance.now() - start) / 1_000);
}

const sdkRates: number[] = [];
const fetchRates: number[] = [];
for (let round = 0; round < 5; round++) {
  const client = createAuditClient({ baseUrl, concurrency });
  sdkRates.push(
    await rate(async () => {
      for (let index = 0; index < events; index++) client.record(event);
      await client.close({ timeoutMs: 60_000 });
    }),
  );
  fetchRates.push(await rate(() => postWithFetch(baseUrl, events, concurrency)));
}
server.close();
const sdkRate = median(sdkRates);
const fetchRate = median(fetchRates);
console.log(
  `delivery (concurrency ${concurrency}, local node:http): ${sdkRate.toFixed(0)} events/s; plain fetch: ${fetchRate.toFixed(0)} requests/s; ratio ${(sdkRate / fetchRate).toFixed(2)}`,
);
