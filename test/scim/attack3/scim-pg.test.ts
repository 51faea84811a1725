// Attack 3 on PostgreSQL (runs when PLATFORM_INTEGRATION_PG_URL is set): paging edge values
// through listPage, and the userName case rule across memory, SQLite and PostgreSQL.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../../src/scim/index.ts";
import { SqliteUserStore } from "../../../src/stores/sqlite/index.ts";
import { clientOf, postgresStores, token } from "../attack/support.ts";

const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL || undefined;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function onPostgres() {
  const { stores, drop } = await postgresStores(pgUrl as string, 1);
  cleanups.push(drop);
  return clientOf(createScimHandler({ store: stores[0] as ScimUserStore, token }));
}

describe.skipIf(pgUrl === undefined)("PostgreSQL paging", () => {
  it.each([["1e20"], ["9223372036854775808"], ["1e300"]])(
    "startIndex=%s answers 200 with no Resources (RFC 7644 §3.4.2.4), not 503",
    async (startIndex) => {
      const scim = await onPostgres();
      await scim("POST", "/Users", { userName: "a" });
      const answer = await scim("GET", `/Users?startIndex=${startIndex}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.totalResults).toBe(1);
    },
  );
});

describe.skipIf(pgUrl === undefined)("the userName case rule, store by store", () => {
  const makers: [string, () => Promise<ReturnType<typeof clientOf>>][] = [
    ["memory", async () => clientOf(createScimHandler({ store: new MemoryUserStore({}), token }))],
    [
      "sqlite",
      async () =>
        clientOf(
          createScimHandler({
            store: new SqliteUserStore(
              join(mkdtempSync(join(tmpdir(), "attack3-")), "u.db"),
              {},
            ) as ScimUserStore,
            token,
          }),
        ),
    ],
    ["postgres", onPostgres],
  ];
  const pairs = [
    ["ÄRGER", "ärger"],
    ["STRASSE", "straße"],
    ["İstanbul", "istanbul"],
    ["ＡＢＣ", "ａｂｃ"],
    ["KELVIN", "\u212Aelvin"],
    ["Alice", "aLICE"],
  ];
  it("every store answers each second POST alike", async () => {
    const answers: Record<string, number[]> = {};
    for (const [name, make] of makers) {
      const scim = await make();
      answers[name] = [];
      for (const [first, second] of pairs) {
        await scim("POST", "/Users", { userName: first });
        answers[name].push((await scim("POST", "/Users", { userName: second })).status);
      }
    }
    expect(answers.sqlite).toEqual(answers.memory);
    expect(answers.postgres).toEqual(answers.memory);
    // What docs/scim.md promises: ASCII letters only.
    expect(answers.memory).toEqual([201, 201, 201, 201, 201, 409]);
  });
});
