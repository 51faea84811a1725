// SCIM create and PATCH against the Provisioning API's create and modify on the same kind of
// store, each handler on its own store seeded with 1,000 users, called in-process through
// `handler.fetch` (no socket: the figure is the handler's and the store's work, not the HTTP
// server's), 32 requests in flight. Stores: MemoryUserStore and SqliteUserStore (a file in the
// temporary folder, synchronous "full" as by default); `BENCH_STORES=memory` for one.
//
// The figure is requests per CPU second of this process (process.cpuUsage, user + system, the
// engine's GC threads included), not per wall second: on a shared machine the wall clock counts
// the neighbours' work, the CPU clock only ours. Wall rates are printed beside it. Each round
// runs every workload of a pair once, rotating which goes first; the figure is the median over the
// rounds, and a ratio the median of the per-round ratios.
//
// The baselines of each pair, from bare to fair:
// - provisioning: the Provisioning API's create (uuid, username, names, email) or modify of
//   `last_name`, as before: no authentication, one store call, a bodiless answer.
// - + auth: the same behind SCIM's own bearer-token check (bearerToken: SHA-256, constant time).
// - + look-up: and the second store call SCIM cannot avoid: before a create, the case-insensitive
//   userName look-up (findUsers); before a PATCH, the read of the user its conditional write
//   compares with (get).
// - fair: and the answer SCIM must give, the whole user as JSON (the same attributes and `meta`,
//   serialized), instead of none. What is left between fair and SCIM is SCIM's own work: its
//   body's schema, the PATCH, the mapping to the record, the ETag, the conditional write.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { withHeaderRecord } from "../src/provisioning/headers.ts";
import { createFetchEntry } from "../src/provisioning/http/fetch-entry.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningRequest,
  type ProvisioningResponse,
  type UserStore,
  type UserStoreReads,
} from "../src/provisioning/index.ts";
import { bearerToken, createScimHandler } from "../src/scim/index.ts";
import { SqliteUserStore } from "../src/stores/sqlite/index.ts";

const roundSeconds = Number(process.env.BENCH_ROUND_SECONDS ?? 0.5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const storeKinds = (process.env.BENCH_STORES ?? "memory,sqlite").split(",");
const token = "a-long-random-bench-token";
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const folder = mkdtempSync(join(tmpdir(), "scim-bench-"));
const scimHeaders = { authorization: `Bearer ${token}`, "content-type": "application/scim+json" };
const provisioningHeaders = {
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
};

type Store = UserStore & UserStoreReads & Required<Pick<UserStore, "replace">>;
type Handler = { fetch(request: Request): Promise<Response> };
type Workload = { name: string; handler: Handler; next(): Request; want: number };

let serial = 0;
let storeSerial = 0;

function newStore(kind: string): Store {
  if (kind === "memory") return new MemoryUserStore();
  return new SqliteUserStore(join(folder, `store-${++storeSerial}.db`));
}

function scimUser(n: number) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    externalId: `ext-${n}`,
    userName: `bob${n}@acme.test`,
    active: true,
    name: { givenName: "Bob", familyName: "Smith" },
    emails: [{ primary: true, type: "work", value: `bob${n}@acme.test` }],
  };
}

function provisioningUser(n: number) {
  return {
    uuid: `uuid-${n}`,
    username: `bob${n}@acme.test`,
    first_name: "Bob",
    last_name: "Smith",
    email: `bob${n}@acme.test`,
  };
}

const post = (url: string, headers: Record<string, string>, body: unknown, method = "POST") =>
  new Request(url, { method, headers, body: JSON.stringify(body) });

const decoder = new TextDecoder();

/**
 * The Provisioning API's handler with `stages` of SCIM's irreducible work around it: the token
 * check, the second store call, the whole user answered as SCIM answers it (see the top).
 */
function provisioningPlus(store: Store, stages: number): Handler {
  const provisioning = createProvisioningHandler({ store, logger: quiet });
  const authenticate = bearerToken(token);
  const handle = async (request: ProvisioningRequest): Promise<ProvisioningResponse> => {
    if (!(await authenticate(withHeaderRecord(request))))
      return { status: 401, headers: {}, body: undefined };
    const sent = JSON.parse(decoder.decode(request.body)) as Record<string, string>;
    const create = request.path.endsWith("/create");
    if (stages >= 2) {
      if (create) {
        await store.findUsers?.({
          field: "username",
          value: sent.username ?? "",
          ignoreCase: true,
        });
      } else await store.get(sent.uuid ?? "");
    }
    const answer = await provisioning.handle(request);
    if (stages < 3 || answer.status >= 300) return answer;
    const now = new Date().toISOString();
    const n = sent.uuid?.slice(sent.uuid.indexOf("-") + 1);
    const body = {
      ...scimUser(Number(n)),
      id: sent.uuid,
      name: { givenName: "Bob", familyName: sent.last_name },
      meta: {
        resourceType: "User",
        created: now,
        lastModified: now,
        location: `/scim/v2/Users/${sent.uuid}`,
        version: 'W/"0123456789abcdef"',
      },
    };
    return {
      status: create ? 201 : 200,
      headers: { "content-type": "application/scim+json", etag: body.meta.version },
      body: JSON.stringify(body),
    };
  };
  return {
    fetch: createFetchEntry({
      handle,
      owns: (path) => path.startsWith("/v1/"),
      bodyLimit: provisioning.bodyLimit,
    }),
  };
}

async function workloads(kind: string) {
  const scim = createScimHandler({ store: newStore(kind), token, logger: quiet });
  const baselines = [
    {
      name: "provisioning",
      handler: createProvisioningHandler({ store: newStore(kind), logger: quiet }),
    },
    { name: "+ auth", handler: provisioningPlus(newStore(kind), 1) },
    { name: "+ look-up", handler: provisioningPlus(newStore(kind), 2) },
    { name: "fair", handler: provisioningPlus(newStore(kind), 3) },
  ];
  const ids: string[] = [];
  const uuids: string[] = [];
  // 1,000 users in each store for the PATCHes and modifies to change.
  for (let index = 0; index < 1000; index++) {
    const n = ++serial;
    const created = await scim.fetch(
      post("http://localhost/scim/v2/Users", scimHeaders, scimUser(n)),
    );
    ids.push(((await created.json()) as { id: string }).id);
    for (const { handler } of baselines) {
      const answer = await handler.fetch(
        post("http://localhost/v1/user/create", provisioningHeaders, provisioningUser(n)),
      );
      if (answer.status !== 201) throw new Error(`seeding answered ${answer.status}`);
    }
    uuids.push(`uuid-${n}`);
  }
  let patched = 0;
  const creates: Workload[] = [
    {
      name: "SCIM POST /Users",
      handler: scim,
      want: 201,
      next: () => post("http://localhost/scim/v2/Users", scimHeaders, scimUser(++serial)),
    },
    ...baselines.map(({ name, handler }) => ({
      name,
      handler,
      want: 201,
      next: () =>
        post("http://localhost/v1/user/create", provisioningHeaders, provisioningUser(++serial)),
    })),
  ];
  const patches: Workload[] = [
    {
      name: "SCIM PATCH Replace",
      handler: scim,
      want: 200,
      next: () => {
        const id = ids[patched++ % ids.length];
        return post(
          `http://localhost/scim/v2/Users/${id}`,
          scimHeaders,
          {
            schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            Operations: [{ op: "Replace", path: "name.familyName", value: `Smith-${patched}` }],
          },
          "PATCH",
        );
      },
    },
    ...baselines.map(({ name, handler }) => ({
      name,
      handler,
      want: name === "provisioning" || name === "+ auth" || name === "+ look-up" ? 204 : 200,
      next: () => {
        const uuid = uuids[patched++ % uuids.length];
        return post("http://localhost/v1/user/modify", provisioningHeaders, {
          uuid,
          last_name: `Smith-${patched}`,
        });
      },
    })),
  ];
  return { create: creates, PATCH: patches };
}

/** Requests per CPU second and per wall second of `workload`, `concurrency` in flight. */
async function measure(workload: Workload, seconds: number) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const response = await workload.handler.fetch(workload.next());
      await response.arrayBuffer();
      if (response.status !== workload.want) {
        throw new Error(`${workload.name} answered ${response.status}, not ${workload.want}`);
      }
      done++;
    }
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpu: done / ((used.user + used.system) / 1e6), wall: done / wall };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");
console.log(
  `handler.fetch in-process, ${concurrency} in flight, median of ${rounds} rounds of ${roundSeconds} s per workload; load average at the start ${load()}\n`,
);
console.log(
  "| Store | Operation | Workload | req/CPU s | req/wall s | Ratio to provisioning (CPU) | SCIM / it (CPU) | Per-round SCIM / it |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
try {
  for (const kind of storeKinds) {
    const pairs = await workloads(kind);
    for (const [operation, list] of Object.entries(pairs)) {
      const cpu = list.map(() => [] as number[]);
      const wall = list.map(() => [] as number[]);
      for (let round = 0; round < rounds; round++) {
        // Rotate which goes first, so that a warming JIT or a noisy neighbour favours none.
        for (let step = 0; step < list.length; step++) {
          const index = (round + step) % list.length;
          const rate = await measure(list[index] as Workload, roundSeconds);
          cpu[index]?.push(rate.cpu);
          wall[index]?.push(rate.wall);
        }
      }
      const [scimCpu] = cpu as [number[]];
      const baseCpu = cpu[1] as number[];
      list.forEach((workload, index) => {
        const own = cpu[index] as number[];
        const perRound = scimCpu.map((value, round) => value / (own[round] as number));
        console.log(
          `| ${kind} | ${operation} | ${workload.name} | ${Math.round(median(own))} | ${Math.round(median(wall[index] as number[]))} | ${median(own.map((value, round) => value / (baseCpu[round] as number))).toFixed(2)} | ${index === 0 ? "" : median(perRound).toFixed(2)} | ${index === 0 ? "" : perRound.map((ratio) => ratio.toFixed(2)).join(" ")} |`,
        );
      });
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
console.log(`\nload average at the end ${load()}`);
