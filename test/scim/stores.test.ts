// Entra ID's and Okta's sequences over the three bundled stores, each with a unique userName and
// email and either onDelete: MemoryUserStore, SqliteUserStore on a file, PostgresUserStore (when
// PLATFORM_INTEGRATION_PG_URL is set; .ci/steps/postgres.sh runs this file).
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimUserStore } from "../../src/scim/index.ts";
import { PostgresUserStore } from "../../src/stores/postgres/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { token } from "./helpers.ts";
import { entraSequence, handlerClient, oktaSequence } from "./sequences.ts";

const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL;
const requirePg = process.env.PLATFORM_INTEGRATION_REQUIRE_PG === "1";
const unique = ["username", "email"] as const;

async function sequences(store: ScimUserStore): Promise<void> {
  const call = handlerClient(createScimHandler({ store, token }));
  await entraSequence(call, "-entra");
  await oktaSequence(call, "-okta");
  // Both protocols on one store: the documented fields show through SCIM, deactivation too.
  const created = await call("POST", "/Users", { userName: "both", name: { givenName: "B" } });
  await store.upsert({ uuid: created.body.id, firstName: "Changed" });
  expect((await call("GET", `/Users/${created.body.id}`)).body.name.givenName).toBe("Changed");
}

describe("the sequences over each bundled store", () => {
  for (const onDelete of ["delete", "deactivate"] as const) {
    it(`MemoryUserStore, onDelete ${onDelete}`, () =>
      sequences(new MemoryUserStore({ unique: [...unique], onDelete })));

    it(`SqliteUserStore, onDelete ${onDelete}`, async () => {
      const folder = await mkdtemp(join(tmpdir(), "scim-sqlite-"));
      const store = new SqliteUserStore(join(folder, "users.db"), {
        unique: [...unique],
        onDelete,
      });
      try {
        await sequences(store);
      } finally {
        store.close();
        await rm(folder, { recursive: true, force: true });
      }
    });
  }
});

describe.runIf(pgUrl || requirePg)("the sequences over PostgresUserStore", () => {
  if (!pgUrl) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_PG=1, but PLATFORM_INTEGRATION_PG_URL is unset",
      );
    });
    return;
  }
  const pool = new Pool({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
  const tables: string[] = [];
  afterAll(async () => {
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS "${table}"`);
    await pool.end();
  });
  for (const onDelete of ["delete", "deactivate"] as const) {
    it(`onDelete ${onDelete}`, async () => {
      const table = `pi scim ${randomUUID().slice(0, 8)}`;
      tables.push(table, `${table}_quarantine`, `${table}_quarantine_awaits`);
      const store = new PostgresUserStore({ pool, table, unique: [...unique], onDelete });
      await store.migrate();
      await sequences(store);
    });
  }
});
