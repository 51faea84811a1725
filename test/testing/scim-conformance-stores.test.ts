// The Entra and Okta sequences of the SCIM checker against createScimHandler on each bundled
// store, as shipped and configured as real applications are (unique fields, deactivation).
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../src/scim/index.ts";
import { PostgresUserStore } from "../../src/stores/postgres/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { runConformance } from "../../src/testing/index.ts";

const token = "s3cret-token-for-tests";
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const strict = {
  unique: ["username", "email"] as ("username" | "email")[],
  onDelete: "deactivate" as const,
};

async function passes(store: ScimUserStore) {
  const report = await runConformance(createScimHandler({ store, token, logger: quiet }), {
    scim: { token },
  });
  expect(report.results.filter((result) => !result.passed || result.warning)).toEqual([]);
  expect(report).toMatchObject({ passed: true, leftBehind: [] });
}

describe("the SCIM checker's sequences on createScimHandler", () => {
  it("pass on MemoryUserStore, as shipped and with unique fields and deactivation", async () => {
    await passes(new MemoryUserStore());
    await passes(new MemoryUserStore(strict));
  });

  it("pass on SqliteUserStore, as shipped and with unique fields and deactivation", async () => {
    const plain = new SqliteUserStore(":memory:") as unknown as ScimUserStore & SqliteUserStore;
    const configured = new SqliteUserStore(":memory:", strict) as unknown as ScimUserStore &
      SqliteUserStore;
    try {
      await passes(plain);
      await passes(configured);
    } finally {
      plain.close();
      configured.close();
    }
  });

  const url = process.env.PLATFORM_INTEGRATION_PG_URL;
  describe.runIf(url)("PostgresUserStore", () => {
    const pool = new pg.Pool({ connectionString: url });
    const tables: string[] = [];
    afterAll(async () => {
      for (const table of tables) await pool.query(`DROP TABLE IF EXISTS "${table}"`);
      await pool.end();
    });
    it("pass, as shipped and with unique fields and deactivation", async () => {
      for (const options of [{}, strict]) {
        const table = `pi scim ${randomUUID().slice(0, 8)}`;
        tables.push(table);
        const store = new PostgresUserStore({ pool, table, ...options });
        await store.migrate();
        await passes(store);
      }
    });
  });
});
