// Runs against the server at PLATFORM_INTEGRATION_PG_URL (.ci/steps/postgres.sh starts one).
// Without it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_PG=1 says it must run.
import { randomUUID } from "node:crypto";
import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { UserLookup } from "../../src/provisioning/index.ts";
import {
  PostgresUserStore,
  type PostgresUserStoreOptions,
} from "../../src/stores/postgres/index.ts";
import { testUserStore } from "../../src/testing/index.ts";
import { quarantinedHandler, quarantineScenarios } from "../support/quarantine-scenarios.ts";

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
    for (const { name } of rows) await pool.query(`DROP TABLE "${name.replaceAll('"', '""')}"`);
    await pool.end();
  });

  const migrated = async (options: PostgresUserStoreOptions & { table: string }) => {
    const store = new PostgresUserStore(options);
    await store.migrate();
    return store;
  };

  // The contract reads users back through a second pool: its own connections, plain SQL.
  const reader = connect();
  afterAll(() => reader.end());
  const tableOf = new WeakMap<PostgresUserStore, string>();
  testUserStore({
    describe,
    it,
    create: async () => {
      const table = newTable();
      const store = await migrated({ pool, table });
      tableOf.set(store, table);
      return store;
    },
    read: (store, uuid) =>
      new PostgresUserStore({ pool: reader, table: tableOf.get(store) as string }).get(uuid),
  });

  describe("with onDelete: deactivate and a unique email", () => {
    testUserStore({
      describe,
      it,
      create: async () => {
        const table = newTable();
        const store = await migrated({ pool, table, unique: ["email"], onDelete: "deactivate" });
        tableOf.set(store, table);
        return store;
      },
      read: (store, uuid) =>
        new PostgresUserStore({ pool: reader, table: tableOf.get(store) as string }).get(uuid),
      onDelete: "deactivate",
      conflict: {
        holder: { uuid: "holder", email: "held@x.io" },
        refused: { uuid: "refused", email: "HELD@x.io" },
      },
    });
  });

  it("loses no update when two replicas upsert the same users at once", async () => {
    const table = newTable();
    const replicas = [connect(), connect()];
    const [one, two] = await Promise.all(
      replicas.map((replica) => migrated({ pool: replica, table })),
    );
    const writes = Array.from({ length: 80 }, (_, index) =>
      (index % 2 ? one! : two!).upsert({
        uuid: `u${index % 4}`,
        extra: { [`key${index}`]: index },
      }),
    );
    const results = await Promise.all(writes);
    expect(results.filter((result) => result.created)).toHaveLength(4);
    for (const uuid of ["u0", "u1", "u2", "u3"]) {
      const user = await two!.get(uuid);
      const expected = Array.from(
        { length: 20 },
        (_, round) => `key${round * 4 + Number(uuid[1])}`,
      );
      expect(Object.keys(user?.extra ?? {}).sort()).toEqual(expected.sort());
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

  /** PostgreSQL's plan of findUsers' own query for `lookup` on `table`. */
  async function lookupPlan(table: string, lookup: UserLookup): Promise<string> {
    const { findQuery } = await import("../../src/stores/postgres/whole-writes.ts");
    const query = findQuery(`"${table}"`, lookup);
    const client = await pool.connect();
    try {
      // A table this small is read whole unless a sequential scan is ruled out.
      await client.query("SET enable_seqscan = off");
      return (await client.query(`EXPLAIN ${query.text}`, query.values)).rows
        .map((row) => row["QUERY PLAN"])
        .join("\n");
    } finally {
      await client.query("RESET enable_seqscan");
      client.release();
    }
  }

  it("finds a username ignoring ASCII case through an index, not by reading the table", async () => {
    const table = newTable();
    const store = await migrated({ pool, table });
    await store.upsert({ uuid: "u1", username: "Bob" });
    expect(
      (await store.findUsers({ field: "username", value: "bOB", ignoreCase: true })).length,
    ).toBe(1);
    expect(await lookupPlan(table, { field: "username", value: "x", ignoreCase: true })).toMatch(
      /Index Scan using pi_username_lower_/,
    );
  });

  it("finds SCIM's externalId through an index, and pages by uuid with the total", async () => {
    const table = newTable();
    const store = await migrated({ pool, table, onDelete: "deactivate" });
    for (const uuid of ["c", "a", "b", "d"]) {
      await store.replace({ uuid, username: uuid, extra: { scim: { externalId: `E-${uuid}` } } });
    }
    const lookup = { extra: ["scim", "externalId"], value: "E-a" } as const;
    expect((await store.findUsers(lookup)).map((user) => user.uuid)).toEqual(["a"]);
    expect(await store.findUsers({ ...lookup, value: "e-a" })).toEqual([]);
    await store.delete("b");
    expect((await store.listPage({ offset: 1, limit: 2 })).users.map((user) => user.uuid)).toEqual([
      "c",
      "d",
    ]);
    expect((await store.listPage({ offset: 1, limit: 2 })).total).toBe(3);
    expect(await store.listPage({ offset: 9, limit: 2, includeDeactivated: true })).toEqual({
      users: [],
      total: 4,
    });
    expect(await lookupPlan(table, lookup)).toMatch(/Index Scan (using|on) pi_extra_path_/);
  });

  it("reads a user with get and every user with list, by uuid", async () => {
    const store = await migrated({ pool, table: newTable() });
    for (const uuid of ["u2", "u1", "u3"]) await store.upsert({ uuid, username: uuid });
    await store.upsert({ uuid: "u1", extra: { level: 3, none: null } });
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "u1", extra: { level: 3 } });
    expect(await store.get("missing")).toBeUndefined();
    expect(await store.list()).toEqual([
      { uuid: "u1", username: "u1", extra: { level: 3 } },
      { uuid: "u2", username: "u2" },
      { uuid: "u3", username: "u3" },
    ]);
  });

  it("keeps a table name as one identifier: quotes, dots, case and spaces are its own", async () => {
    const table = `${newTable()} "x"; DROP TABLE users; --.Mixed`;
    const store = await migrated({ pool, table });
    await store.upsert({ uuid: "u1", username: "bob" });
    const { rows } = await pool.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM pg_tables WHERE tablename = $1",
      [table],
    );
    expect(rows).toEqual([{ count: 1 }]);
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "bob" });
  });

  it("puts the table in the schema it is given", async () => {
    const schema = `${prefix} schema`;
    await pool.query(`CREATE SCHEMA "${schema}"`);
    try {
      const store = await migrated({ pool, table: "users", schema });
      await store.upsert({ uuid: "u1" });
      const { rows } = await pool.query(`SELECT uuid FROM "${schema}".users`);
      expect(rows).toEqual([{ uuid: "u1" }]);
    } finally {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it("refuses a name PostgreSQL would cut or could not hold", () => {
    for (const table of ["", "a\0b", "x".repeat(64), "é".repeat(32)]) {
      expect(() => new PostgresUserStore({ pool, table })).toThrow(TypeError);
    }
    expect(() => new PostgresUserStore({ pool, table: "x".repeat(63) })).not.toThrow();
  });

  it("leaves the pool it is given open: the application ends it", async () => {
    const own = connect();
    const store = await migrated({ pool: own, table: newTable() });
    await store.upsert({ uuid: "u1" });
    expect(own.totalCount).toBeGreaterThan(0);
    expect(own.ended).toBe(false);
    await own.end();
  });

  quarantineScenarios("PostgresUserStore", {
    create: (rules) => migrated({ pool, table: newTable(), ...rules }),
  });

  // Catches: kept messages held in the process rather than in the database.
  it("keeps the kept messages across a restart, and releases them after it", async () => {
    const table = newTable();
    const rules = { unique: ["email"] } as const;
    const first = quarantinedHandler(await migrated({ pool, table, ...rules }));
    await first.create({ uuid: "a", email: "x@x.io" });
    await first.create({ uuid: "c", email: "X@x.io", password: "kept-secret" });
    await first.modify({ uuid: "c", first_name: "Cee" });
    const other = connect();
    const store = await migrated({ pool: other, table, ...rules });
    const second = quarantinedHandler(store);
    expect(
      (await second.handler.quarantined()).map((kept) => [
        kept.uuid,
        kept.operation,
        kept.messages,
      ]),
    ).toEqual([["c", "create", 2]]);
    await second.modify({ uuid: "a", email: "y@x.io" });
    expect(await store.get("c")).toEqual({
      uuid: "c",
      email: "X@x.io",
      password: "kept-secret",
      firstName: "Cee",
    });
    await other.end();
  });

  // Catches: a release without the per-uuid lock or outside one transaction: two replicas then
  // apply a kept message twice, or the modify before the create.
  it("applies each kept message once and in order when two replicas race over them", async () => {
    const table = newTable();
    const rules = { unique: ["email"] } as const;
    const pools = [connect(), connect()];
    const [storeOne, storeTwo] = await Promise.all(
      pools.map((replica) => migrated({ pool: replica, table, ...rules })),
    );
    const one = quarantinedHandler(storeOne as PostgresUserStore);
    const two = quarantinedHandler(storeTwo as PostgresUserStore);
    await one.create({ uuid: "holder", email: "held@x.io" });
    const users = Array.from({ length: 6 }, (_, index) => `u${index}`);
    for (const uuid of users) {
      await (uuid < "u3" ? one : two).create({ uuid, email: "held@x.io" });
      await one.modify({ uuid, first_name: `first ${uuid}` });
      await two.modify({ uuid, last_name: `last ${uuid}` });
    }
    expect(await one.handler.quarantined()).toHaveLength(6);
    // The holder leaves: only one of the six can take the email; the others stay kept.
    await storeOne!.delete("holder");
    const results = await Promise.all([
      one.handler.retryQuarantined(),
      two.handler.retryQuarantined(),
    ]);
    const applied = [...one.changes, ...two.changes].filter((change) => change.uuid !== "holder");
    expect(applied.map((change) => change.type)).toEqual(["created"]);
    expect(results.reduce((sum, result) => sum + result.released, 0)).toBe(1);
    const winner = applied[0]?.uuid as string;
    expect(applied.every((change) => change.uuid === winner)).toBe(true);
    expect(await storeTwo!.get(winner)).toEqual({
      uuid: winner,
      email: "held@x.io",
      firstName: `first ${winner}`,
      lastName: `last ${winner}`,
    });
    expect(await one.handler.quarantined()).toHaveLength(5);
    await Promise.all(pools.map((replica) => replica.end()));
  });

  // Finding 2. Catches: a release that removes the uuid's kept rows "by uuid" after reading
  // them, taking with it a message another replica kept (and acknowledged) in between.
  it("loses no message another replica keeps while one releases the same user", async () => {
    const table = newTable();
    const rules = { unique: ["email"] } as const;
    const plain = connect();
    const watched = connect();
    let armed = false;
    let during: (() => Promise<void>) | undefined;
    const connectPlain = watched.connect.bind(watched);
    // Replica two's connections: once armed, the first read of the user's kept rows inside a
    // transaction lets replica one's modify run before the release goes on.
    (watched as { connect: unknown }).connect = async (...args: unknown[]) => {
      // pool.query connects with a callback: left as it is.
      if (args.length > 0) return (connectPlain as (...rest: unknown[]) => unknown)(...args);
      const client = await connectPlain();
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as { query: unknown }).query = async (...args: unknown[]) => {
        const result = await query(...args);
        const text = typeof args[0] === "string" ? args[0] : "";
        if (armed && /quarantine.* WHERE uuid = \$1/s.test(text) && during !== undefined) {
          armed = false;
          await during();
        }
        return result;
      };
      return client;
    };
    const storeOne = await migrated({ pool: plain, table, ...rules });
    const storeTwo = await migrated({ pool: watched, table, ...rules });
    const one = quarantinedHandler(storeOne);
    const two = quarantinedHandler(storeTwo);
    await one.create({ uuid: "holder", email: "held@x.io" });
    await one.create({ uuid: "c", email: "held@x.io" });
    await storeOne.delete("holder");
    let answered: number | undefined;
    during = async () => {
      const modify = one.modify({ uuid: "c", first_name: "Cee" }).then((answer) => {
        answered = answer.status;
      });
      // Until replica one's modify has answered, or waits for a lock replica two holds.
      for (;;) {
        if (answered !== undefined) break;
        const { rows } = await plain.query(
          "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
        );
        if ((rows[0] as { waiting: number }).waiting > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      void modify;
    };
    armed = true;
    await two.handler.retryQuarantined();
    for (;;) {
      if (answered !== undefined) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(answered).toBe(204);
    await one.handler.retryQuarantined();
    expect(await storeOne.get("c")).toEqual({ uuid: "c", email: "held@x.io", firstName: "Cee" });
    expect(await one.handler.quarantined()).toEqual([]);
    await Promise.all([plain.end(), watched.end()]);
  });

  it("makes the unique indexes follow the option, and refuses one the data already breaks", async () => {
    const table = newTable();
    const plain = await migrated({ pool, table });
    await plain.upsert({ uuid: "a", email: "x@x.io", username: "sam" });
    await plain.upsert({ uuid: "b", email: "X@x.io" });
    await expect(migrated({ pool, table, unique: ["email"] })).rejects.toThrow(
      /cannot make email unique: two active users already share a value/,
    );
    const strict = await migrated({ pool, table, unique: ["username"] });
    await expect(strict.upsert({ uuid: "c", username: "sam" })).rejects.toMatchObject({
      name: "UserConflictError",
      field: "username",
    });
    await migrated({ pool, table });
    await expect(plain.upsert({ uuid: "c", username: "sam" })).resolves.toMatchObject({
      created: true,
    });
  });

  // Attack finding 6. Catches: a step PostgreSQL aborted as a deadlock (overlapping swaps on the
  // unique indexes) answered 503, and a retry without end.
  it("runs a quarantine step again when PostgreSQL aborts it as a deadlock, a few times", async () => {
    const injected = connect();
    let deadlocks = 0;
    injected.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      Object.assign(client, {
        query: (...args: unknown[]) => {
          if (deadlocks > 0 && typeof args[0] === "string" && args[0].includes(" AS stored ")) {
            deadlocks--;
            const error = Object.assign(new Error("deadlock detected"), { code: "40P01" });
            return Promise.reject(error);
          }
          return query(...args);
        },
      });
    });
    const store = await migrated({ pool: injected, table: newTable(), unique: ["email"] });
    const errors: unknown[] = [];
    const app = quarantinedHandler(store, { onError: (error) => void errors.push(error) });
    deadlocks = 1;
    expect((await app.create({ uuid: "a", email: "a@x.io" })).status).toBe(201);
    expect(await store.get("a")).toEqual({ uuid: "a", email: "a@x.io" });
    expect(errors).toEqual([]);
    // Aborted every time: reported after a bounded number of runs, never retried for ever.
    deadlocks = 100;
    expect((await app.create({ uuid: "b" })).status).toBe(503);
    expect(100 - deadlocks).toBeGreaterThan(1);
    expect(100 - deadlocks).toBeLessThanOrEqual(5);
    expect(await store.get("b")).toBeUndefined();
    await injected.end();
  });

  it("is not ready when the server cannot be reached", async () => {
    const unreachable = new Pool({ connectionString: "postgres://127.0.0.1:1/none" });
    expect(await new PostgresUserStore({ pool: unreachable }).ready()).toBe(false);
    await unreachable.end();
  });
});
