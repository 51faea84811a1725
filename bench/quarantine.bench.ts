// A create's answer time through the quarantine on SQLite, with 0, 1,000 and 10,000 users kept
// (each waiting for an email one user holds for good), against the same handler and store with
// none kept. The goal (issue 37): 1,000 kept within 1.2x of none. Rounds alternate between the
// three databases, and the median round counts, so that noise from other work hits them alike.
// Each create is sent alone, awaited, as the platform sends its messages one at a time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvisioningHandler } from "../src/provisioning/index.ts";
import { SqliteUserStore } from "../src/stores/sqlite/index.ts";

const keptCounts = (process.env.BENCH_KEPT ?? "0,1000,10000").split(",").map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const perRound = Number(process.env.BENCH_CREATES ?? 500);
const synchronous = (process.env.BENCH_SYNCHRONOUS ?? "normal") as "normal" | "full";

const folder = mkdtempSync(join(tmpdir(), "pi-quarantine-bench-"));
const encoder = new TextEncoder();
const create = (user: object) => ({
  method: "POST",
  path: "/v1/user/create",
  headers: { "content-type": "application/json" },
  body: encoder.encode(JSON.stringify(user)),
});

async function subject(kept: number) {
  const store = new SqliteUserStore(join(folder, `kept-${kept}.db`), {
    unique: ["username", "email"],
    synchronous,
  });
  const quiet = () => {};
  const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
  const handler = createProvisioningHandler({ store, quarantine: true, logger });
  const send = async (user: object, status: number) => {
    const answer = await handler.handle(create(user));
    if (answer.status !== status) throw new Error(`answered ${answer.status}`);
  };
  await send({ uuid: "holder", email: "held@x.io" }, 201);
  for (let index = 0; index < kept; index++) {
    await send({ uuid: `kept-${index}`, username: `kept${index}`, email: "held@x.io" }, 201);
  }
  const waiting = (await handler.quarantined()).length;
  if (waiting !== kept) throw new Error(`${waiting} kept, not ${kept}`);
  let next = 0;
  /** Microseconds per create, over `perRound` creates of new users sent one at a time. */
  const round = async () => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < perRound; index++, next++) {
      await send({ uuid: `new-${next}`, username: `new${next}`, email: `new${next}@x.io` }, 201);
    }
    return Number(process.hrtime.bigint() - start) / 1000 / perRound;
  };
  return { kept, round, close: () => store.close() };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

try {
  console.log(
    `create through the quarantine, SqliteUserStore synchronous ${synchronous}, median of ${rounds} rounds of ${perRound} creates\n`,
  );
  const subjects = [];
  for (const kept of keptCounts) subjects.push(await subject(kept));
  const times = new Map<number, number[]>(keptCounts.map((kept) => [kept, []]));
  for (const each of subjects) await each.round(); // warm-up
  for (let index = 0; index < rounds; index++) {
    for (const each of subjects) times.get(each.kept)?.push(await each.round());
  }
  const base = median(times.get(keptCounts[0] as number) ?? []);
  console.log("| users kept | µs per create (median round) | ratio to none kept |");
  console.log("|---:|---:|---:|");
  for (const kept of keptCounts) {
    const time = median(times.get(kept) ?? []);
    console.log(
      `| ${kept.toLocaleString("en")} | ${time.toFixed(1)} | ${(time / base).toFixed(2)}x |`,
    );
  }
  for (const each of subjects) each.close();
} finally {
  rmSync(folder, { recursive: true, force: true });
}
