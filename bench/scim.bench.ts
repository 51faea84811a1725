// SCIM create and PATCH throughput against the Provisioning API's create and modify, each handler
// on its own MemoryUserStore, called in-process through `handler.fetch` (no socket: the figure is
// the handler's and the store's work, not the HTTP server's). Each round runs the four workloads
// one after the other, rotating which goes first, each 32 requests at a time; the figure is the
// median over the rounds, and the ratio the median of the per-round ratios (work on the machine
// between rounds hits both alike).
//
// - create: `POST /Users` (Entra's body: userName, name, work email, externalId, active) against
//   `POST /v1/user/create` (the platform's: uuid, username, names, email) of the same user.
// - PATCH: one Entra `Replace` of `name.familyName` on a user created before the round, against
//   `POST /v1/user/modify` of `last_name` for the same user.
import { createProvisioningHandler, MemoryUserStore } from "../src/provisioning/index.ts";
import { createScimHandler } from "../src/scim/index.ts";

const roundSeconds = Number(process.env.BENCH_ROUND_SECONDS ?? 1);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const token = "a-long-random-bench-token";
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

type Workload = { name: string; next(): Request; want: number };

function workloads() {
  const scimStore = new MemoryUserStore();
  const provisioningStore = new MemoryUserStore();
  const scim = createScimHandler({ store: scimStore, token, logger: quiet });
  const provisioning = createProvisioningHandler({ store: provisioningStore, logger: quiet });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/scim+json" };
  let serial = 0;
  const ids: string[] = [];
  const uuids: string[] = [];
  const scimCreate: Workload = {
    name: "SCIM POST /Users",
    want: 201,
    next: () => {
      const n = ++serial;
      return new Request("http://localhost/scim/v2/Users", {
        method: "POST",
        headers,
        body: JSON.stringify({
          schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
          externalId: `ext-${n}`,
          userName: `bob${n}@acme.test`,
          active: true,
          name: { givenName: "Bob", familyName: "Smith" },
          emails: [{ primary: true, type: "work", value: `bob${n}@acme.test` }],
        }),
      });
    },
  };
  const provisioningCreate: Workload = {
    name: "Provisioning create",
    want: 201,
    next: () => {
      const n = ++serial;
      return new Request("http://localhost/v1/user/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          uuid: `uuid-${n}`,
          username: `bob${n}@acme.test`,
          first_name: "Bob",
          last_name: "Smith",
          email: `bob${n}@acme.test`,
        }),
      });
    },
  };
  let patched = 0;
  const scimPatch: Workload = {
    name: "SCIM PATCH Replace",
    want: 200,
    next: () =>
      new Request(`http://localhost/scim/v2/Users/${ids[patched++ % ids.length]}`, {
        method: "PATCH",
        headers,
        body: JSON.stringify({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "Replace", path: "name.familyName", value: `Smith-${patched}` }],
        }),
      }),
  };
  let modified = 0;
  const provisioningModify: Workload = {
    name: "Provisioning modify",
    want: 204,
    next: () =>
      new Request("http://localhost/v1/user/modify", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          uuid: uuids[modified++ % uuids.length],
          last_name: `Smith-${modified}`,
        }),
      }),
  };
  return {
    handlers: { scim, provisioning },
    pairs: [
      [scimCreate, provisioningCreate],
      [scimPatch, provisioningModify],
    ] as const,
    async seed() {
      // 1,000 users in each store for the PATCHes and modifies to change.
      for (let index = 0; index < 1000; index++) {
        const created = await scim.fetch(scimCreate.next());
        ids.push(((await created.json()) as { id: string }).id);
        const uuid = `seed-${index}`;
        await provisioning.fetch(
          new Request("http://localhost/v1/user/create", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ uuid, username: `seed${index}`, last_name: "Smith" }),
          }),
        );
        uuids.push(uuid);
      }
    },
  };
}

/** Requests per second of `workload` on `handler`, `concurrency` in flight, for `seconds`. */
async function measure(
  handler: { fetch(request: Request): Promise<Response> },
  workload: Workload,
  seconds: number,
) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const response = await handler.fetch(workload.next());
      await response.arrayBuffer();
      if (response.status !== workload.want) {
        throw new Error(`${workload.name} answered ${response.status}, not ${workload.want}`);
      }
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done / ((performance.now() - started) / 1000);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const { handlers, pairs, seed } = workloads();
await seed();
console.log(
  `handler.fetch in-process, ${concurrency} in flight, median of ${rounds} rounds of ${roundSeconds} s\n`,
);
const rows: string[][] = [];
for (const [scimWork, provisioningWork] of pairs) {
  const scimRates: number[] = [];
  const provisioningRates: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so that a warming JIT or a noisy neighbour favours neither.
    const scimFirst = round % 2 === 0;
    const one = async (scim: boolean) =>
      scim
        ? measure(handlers.scim, scimWork, roundSeconds)
        : measure(handlers.provisioning, provisioningWork, roundSeconds);
    const first = await one(scimFirst);
    const second = await one(!scimFirst);
    const [scimRate, provisioningRate] = scimFirst ? [first, second] : [second, first];
    scimRates.push(scimRate);
    provisioningRates.push(provisioningRate);
    ratios.push(scimRate / provisioningRate);
  }
  rows.push([
    `${scimWork.name} / ${provisioningWork.name}`,
    `${Math.round(median(scimRates))}/s`,
    `${Math.round(median(provisioningRates))}/s`,
    median(ratios).toFixed(2),
    ratios.map((ratio) => ratio.toFixed(2)).join(" "),
  ]);
}
console.log("| Workload (SCIM / baseline) | SCIM | Provisioning API | Ratio | Per-round ratios |");
console.log("| --- | --- | --- | --- | --- |");
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
