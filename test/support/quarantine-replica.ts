// One replica of an application for the quarantine's model test, in a process of its own: a
// handler with the quarantine over a SqliteUserStore file or a PostgreSQL table that the other
// replicas share, a random delay (seeded) before and after every store call, served on loopback.
// Each answer carries `x-store-calls`: the store calls its request made (I5). GET /quarantined and
// POST /retry serve the handler's listing and retry. It prints its port once it is serving; on
// start it calls retryQuarantined() once, the documented recovery for a replica that died between
// a step and the releases it woke. `quarantine: false` starts it with the option off, as an
// operator who turns it off between runs does.
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer } from "node:http";
import { createProvisioningHandler, type UserStore } from "../../src/provisioning/index.ts";

const config = JSON.parse(process.argv[2] as string) as {
  kind: "sqlite" | "postgres";
  file?: string;
  url?: string;
  table?: string;
  seed: number;
  delayMs: number;
  quarantine: boolean;
};

let state = config.seed >>> 0 || 1;
function random(): number {
  // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pause = () =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.floor(random() * config.delayMs)));

const unique = ["username", "email"] as const;
let store: UserStore;
let close: () => Promise<void>;
if (config.kind === "sqlite") {
  const { SqliteUserStore } = await import("../../src/stores/sqlite/index.ts");
  const sqlite = new SqliteUserStore(config.file as string, { unique: [...unique] });
  store = sqlite;
  close = async () => sqlite.close();
} else {
  const { default: pg } = await import("pg");
  const { PostgresUserStore } = await import("../../src/stores/postgres/index.ts");
  const pool = new pg.Pool({ connectionString: config.url, max: 4 });
  store = new PostgresUserStore({ pool, table: config.table, unique: [...unique] });
  close = () => pool.end();
}

const request = new AsyncLocalStorage<{ calls: number }>();
const delayed = new Proxy(store, {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver);
    if (typeof value !== "function") return value;
    return async (...args: unknown[]) => {
      const counter = request.getStore();
      if (counter !== undefined) counter.calls++;
      await pause();
      try {
        return await value.apply(target, args);
      } finally {
        await pause();
      }
    };
  },
}) as UserStore;

const quiet = () => {};
const handler = createProvisioningHandler({
  store: delayed,
  quarantine: config.quarantine,
  logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
});
if (config.quarantine) await handler.retryQuarantined();

const server = createServer(async (incoming, outgoing) => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const path = incoming.url ?? "/";
  if (path === "/quarantined") {
    outgoing.end(JSON.stringify(await handler.quarantined()));
    return;
  }
  if (path === "/retry") {
    outgoing.end(JSON.stringify(await handler.retryQuarantined()));
    return;
  }
  const counter = { calls: 0 };
  const answer = await request.run(counter, () =>
    handler.handle({
      method: incoming.method ?? "GET",
      path,
      headers: incoming.headers as Record<string, string>,
      body: Buffer.concat(chunks),
    }),
  );
  outgoing.writeHead(answer.status, { "x-store-calls": String(counter.calls) });
  outgoing.end(answer.body === undefined ? undefined : answer.body);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
});
// The test holds this pipe open: when it ends (the test died), so does the replica.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
process.on("SIGTERM", () => {
  server.close();
  void close().then(() => process.exit(0));
});
