// Runs against the server at PLATFORM_INTEGRATION_PG_URL (.ci/steps/postgres.sh starts one).
// Without it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_PG=1 says it must run.
import { randomUUID } from "node:crypto";
import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testUserStore } from "../../src/testing/index.ts";
import { PostgresUserStore } from "./postgres-user-store.ts";

const url = process.env.PLATFORM_INTEGRATION_PG_URL;
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_PG === "1";

describe.runIf(url || required)("PostgresUserStore", () => {
  if (!url) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_PG=1, but PLATFORM_INTEGRATION_PG_URL is unset",
      );
    });
    return;
  }
  // Tables of this run only, dropped at the end: the URL may point at a developer's database.
  const prefix = `pi test ${randomUUID().slice(0, 8)}`;
  let tables = 0;
  const newTable = () => `${prefix} ${++tables}`;
  const connect = () => new Pool({ connectionString: url, connectionTimeoutMillis: 5000 });
  const pool = connect();
  afterAll(async () => {
    const { rows } = await pool.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE starts_with(tablename, $1)",
      [prefix],
    );
    for (const { name } of rows) await pool.query(`DROP TABLE "${name}"`);
    await pool.end();
  });

  const migrated = async (options: { pool: Pool; table: string }) => {
    const store = new PostgresUserStore(options);
    await store.migrate();
    return store;
  };

  testUserStore({ describe, it, create: () => migrated({ pool, table: newTable() }) });

  it("loses no update when two replicas upsert the same users at once", async () => {
    const table = newTable();
    const replicas = [connect(), connect()];
    const [one, two] = await Promise.all(
      replicas.map((replica) => migrated({ pool: replica, table })),
    );
    const writes = Array.from({ length: 40 }, (_, index) =>
      (index % 2 ? one! : two!).upsert({
        uuid: `u${index % 4}`,
        extra: { [`key${index}`]: index },
      }),
    );
    const results = await Promise.all(writes);
    expect(results.filter((result) => result.created)).toHaveLength(4);
    for (const uuid of ["u0", "u1", "u2", "u3"]) {
      const { user } = await one!.upsert({ uuid });
      expect(Object.keys(user.extra ?? {})).toHaveLength(10);
    }
    await Promise.all(replicas.map((replica) => replica.end()));
  });

  it("creates its table once when several replicas migrate at the same time", async () => {
    const table = newTable();
    const stores = Array.from({ length: 4 }, () => new PostgresUserStore({ pool, table }));
    expect(await stores[0]!.ready()).toBe(false);
    await Promise.all(stores.map((store) => store.migrate()));
    expect(await Promise.all(stores.map((store) => store.ready()))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it("opens and ends its own pool from a connection string, and leaves a given pool open", async () => {
    const table = newTable();
    const own = new PostgresUserStore({ connectionString: url, table });
    await own.migrate();
    expect((await own.upsert({ uuid: "u1", username: "bob" })).created).toBe(true);
    await own.close();
    await expect(own.upsert({ uuid: "u1" })).rejects.toThrow();

    const shared = await migrated({ pool, table });
    await shared.close();
    expect(await shared.upsert({ uuid: "u1" })).toEqual({
      created: false,
      user: { uuid: "u1", username: "bob" },
    });
  });

  it("is not ready when the server cannot be reached", async () => {
    const store = new PostgresUserStore({ connectionString: "postgres://127.0.0.1:1/none" });
    expect(await store.ready()).toBe(false);
    await store.close();
  });
});
