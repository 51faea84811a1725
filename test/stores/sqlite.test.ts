import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { UserPatch } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import { testUserStore } from "../../src/testing/index.ts";
import { quarantinedHandler, quarantineScenarios } from "../support/quarantine-scenarios.ts";

const source = fileURLToPath(new URL("../../src/stores/sqlite/index.ts", import.meta.url));

let folder: string;
let files = 0;
const newFile = () => join(folder, `users-${++files}.db`);

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "sqlite-user-store-"));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

// Each store's file, so that the contract reads users back through a connection of its own.
const fileOf = new WeakMap<SqliteUserStore, string>();
testUserStore({
  describe,
  it,
  create: () => {
    const file = newFile();
    const store = new SqliteUserStore(file);
    fileOf.set(store, file);
    return store;
  },
  destroy: (store) => store.close(),
  read: async (store, uuid) => {
    const reader = new SqliteUserStore(fileOf.get(store) as string);
    try {
      return await reader.get(uuid);
    } finally {
      reader.close();
    }
  },
});

describe("with onDelete: deactivate and a unique email", () => {
  testUserStore({
    describe,
    it,
    create: () => {
      const file = newFile();
      const store = new SqliteUserStore(file, { unique: ["email"], onDelete: "deactivate" });
      fileOf.set(store, file);
      return store;
    },
    destroy: (store) => store.close(),
    read: async (store, uuid) => {
      const reader = new SqliteUserStore(fileOf.get(store) as string);
      try {
        return await reader.get(uuid);
      } finally {
        reader.close();
      }
    },
    onDelete: "deactivate",
    conflict: {
      holder: { uuid: "holder", email: "held@x.io" },
      refused: { uuid: "refused", email: "HELD@x.io" },
    },
  });
});

// A writer in its own process: its own connection, its own file locks.
const writer = `
import { SqliteUserStore } from ${JSON.stringify(source)};
const [file, name, count] = process.argv.slice(1);
const store = new SqliteUserStore(file);
const created = [];
for (let index = 0; index < Number(count); index++) {
  const shared = await store.upsert({ uuid: "shared", extra: { [name + "-" + index]: index } });
  const own = await store.upsert({ uuid: name + "-" + index, username: name });
  if (shared.created) created.push("shared");
  if (own.created) created.push(own.user.uuid);
}
store.close();
console.log(JSON.stringify(created));
`;

// A writer whose files may not grow beyond a few hundred KiB (ulimit -f): its commits soon fail to
// write the WAL, as on a full disk. It creates users and changes them, and lists what it was told
// was stored.
const cramped = `
import { SqliteUserStore } from ${JSON.stringify(source)};
const store = new SqliteUserStore(process.argv[1], { synchronous: "normal" });
const acknowledged = [];
let failed = 0;
for (let index = 0; index < 200; index++) {
  for (const patch of [{ uuid: "u" + index }, { uuid: "u" + index, fullName: "x".repeat(2000) }]) {
    try {
      await store.upsert(patch);
      acknowledged.push(patch);
    } catch {
      failed++;
    }
  }
}
console.log(JSON.stringify({ acknowledged, failed }));
`;

// A replica that starts with others on new files: for each round it waits for the round's
// moment (a wall-clock barrier the replicas share), opens the round's file, which nobody has
// created yet, and writes a user. It prints the rounds it could not start in, with the error.
const replica = `
import { SqliteUserStore } from ${JSON.stringify(source)};
const [folder, name, rounds, startAt, spacing] = process.argv.slice(1);
const failures = [];
for (let round = 0; round < Number(rounds); round++) {
  const moment = Number(startAt) + round * Number(spacing);
  while (Date.now() < moment) {}
  try {
    const store = new SqliteUserStore(folder + "/starts-" + round + ".db");
    await store.upsert({ uuid: name + "-" + round });
    store.close();
  } catch (error) {
    failures.push(round + ": " + error.message);
  }
}
console.log(JSON.stringify(failures));
`;

describe("SqliteUserStore", () => {
  it("finds a username ignoring ASCII case through an index, not by reading the table", async () => {
    const file = newFile();
    const store = new SqliteUserStore(file);
    await store.upsert({ uuid: "u1", username: "Bob" });
    expect(await store.findUsers({ field: "username", value: "bOB", ignoreCase: true })).toEqual([
      { uuid: "u1", username: "Bob" },
    ]);
    store.close();
    const db = new DatabaseSync(file);
    // The look-up's statement (src/stores/sqlite/whole-writes.ts), planned.
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT * FROM provisioned_users WHERE lower(username) = lower(?) ORDER BY rowid",
      )
      .all("x")
      .map((row) => row.detail);
    db.close();
    expect(plan.join("\n")).toMatch(/USING INDEX provisioned_users_username_lower/);
  });

  it("finds SCIM's externalId through an index, not by reading the table", async () => {
    const file = newFile();
    const store = new SqliteUserStore(file);
    await store.replace({ uuid: "u1", username: "bob", extra: { scim: { externalId: "E-1" } } });
    const lookup = { extra: ["scim", "externalId"], value: "E-1" } as const;
    expect((await store.findUsers(lookup)).map((user) => user.uuid)).toEqual(["u1"]);
    expect(await store.findUsers({ ...lookup, value: "e-1" })).toEqual([]);
    store.close();
    const { findQuery } = await import("../../src/stores/sqlite/whole-writes.ts");
    const db = new DatabaseSync(file);
    const planOf = (query: { text: string; values: string[] }) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${query.text}`)
        .all(...query.values)
        .map((row) => row.detail)
        .join("\n");
    // The look-up's own statement, planned: the index, where a bound path read the whole table.
    expect(planOf(findQuery("provisioned_users", lookup))).toMatch(
      /USING INDEX provisioned_users_extra_path/,
    );
    expect(
      planOf(findQuery("provisioned_users", { extra: ["scim", "other"], value: "x" })),
    ).toMatch(/^SCAN provisioned_users/);
    db.close();
  });

  it("pages users in the order of creation with their total, in one statement", async () => {
    const store = new SqliteUserStore(newFile(), { onDelete: "deactivate" });
    for (const uuid of ["c", "a", "b", "d"]) await store.upsert({ uuid, username: uuid });
    await store.delete("b");
    expect(await store.listPage({ offset: 1, limit: 2 })).toEqual({
      users: [
        { uuid: "a", username: "a" },
        { uuid: "d", username: "d" },
      ],
      total: 3,
    });
    expect(await store.listPage({ offset: 9, limit: 2, includeDeactivated: true })).toEqual({
      users: [],
      total: 4,
    });
    store.close();
  });

  it("keeps users in the file, for the next store that opens it", async () => {
    const file = newFile();
    const first = new SqliteUserStore(file);
    await first.upsert({ uuid: "u1", username: "bob", extra: { level: 3 } });
    first.close();
    const second = new SqliteUserStore(file);
    expect(await second.upsert({ uuid: "u1" })).toEqual({
      created: false,
      user: { uuid: "u1", username: "bob", extra: { level: 3 } },
    });
    second.close();
  });

  it("loses no update when two stores on one file upsert the same user concurrently", async () => {
    const file = newFile();
    const [one, two] = [new SqliteUserStore(file), new SqliteUserStore(file)];
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (index % 2 ? one : two).upsert({ uuid: "u1", extra: { [`key${index}`]: index } }),
      ),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(Object.keys((await one.upsert({ uuid: "u1" })).user.extra ?? {})).toHaveLength(40);
    one.close();
    two.close();
  });

  // Issue 37, finding 9: switching a new file to WAL takes a lock that the busy timeout does not
  // wait for, so one replica in a few failed to start. Three processes start together on a new
  // file, round after round (bounded: a second or two of npm test).
  it("starts whatever the other replicas starting on the same new file are doing", async () => {
    const starts = await mkdtemp(join(folder, "starts-"));
    const rounds = 25;
    // Far enough ahead that every process has loaded the store before the first round.
    const startAt = Date.now() + 2_500;
    const outputs = await Promise.all(
      ["a", "b", "c"].map((name) =>
        promisify(execFile)(process.execPath, [
          "--no-warnings",
          "--input-type=module",
          "--eval",
          replica,
          starts,
          name,
          String(rounds),
          String(startAt),
          "60",
        ]),
      ),
    );
    expect(outputs.flatMap(({ stdout }) => JSON.parse(stdout) as string[])).toEqual([]);
    for (let round = 0; round < rounds; round++) {
      const store = new SqliteUserStore(join(starts, `starts-${round}.db`));
      expect(await store.count()).toBe(3);
      store.close();
    }
  });

  // The same, made certain: another replica's set-up is writing to the new file (a write
  // transaction on a file not yet in WAL mode, as a CREATE TABLE is) when this one switches it.
  // SQLite then answers SQLITE_BUSY at once, since waiting could deadlock.
  it("starts while another replica holds a write lock on the new file", async () => {
    const file = newFile();
    const holder = execFile(process.execPath, [
      "--no-warnings",
      "--input-type=module",
      "--eval",
      `import { DatabaseSync } from "node:sqlite";
      const db = new DatabaseSync(${JSON.stringify(file)});
      db.exec("BEGIN IMMEDIATE; CREATE TABLE other (id INTEGER)");
      console.log("locked");
      setTimeout(() => db.exec("COMMIT"), 300);`,
    ]);
    await new Promise((resolve) => holder.stdout?.once("data", resolve));
    const store = new SqliteUserStore(file);
    expect((await store.upsert({ uuid: "u1" })).created).toBe(true);
    store.close();
    await new Promise((resolve) => holder.once("exit", resolve));
  });

  it("loses no update and creates each user once when several processes share the file", async () => {
    const file = newFile();
    // The first store creates the file and switches it to WAL before the writers race.
    const store = new SqliteUserStore(file);
    const names = ["a", "b", "c"];
    const count = 60;
    const outputs = await Promise.all(
      names.map((name) =>
        promisify(execFile)(process.execPath, [
          "--no-warnings",
          "--input-type=module",
          "--eval",
          writer,
          file,
          name,
          String(count),
        ]),
      ),
    );
    const created = outputs.flatMap(({ stdout }) => JSON.parse(stdout) as string[]);
    const expected = names.flatMap((name) =>
      Array.from({ length: count }, (_, index) => `${name}-${index}`),
    );
    expect(created.sort()).toEqual(["shared", ...expected].sort());
    const { user } = await store.upsert({ uuid: "shared" });
    expect(Object.keys(user.extra ?? {}).sort()).toEqual([...expected].sort());
    store.close();
  });

  it.skipIf(process.platform === "win32")(
    "acknowledges no create and no change whose commit failed",
    async () => {
      const file = newFile();
      const { stdout } = await promisify(execFile)("/bin/sh", [
        "-c",
        'ulimit -f 400 && exec "$@"',
        "sh",
        process.execPath,
        "--no-warnings",
        "--input-type=module",
        "--eval",
        cramped,
        file,
      ]);
      const { acknowledged, failed } = JSON.parse(stdout) as {
        acknowledged: UserPatch[];
        failed: number;
      };
      expect(failed).toBeGreaterThan(0);
      expect(acknowledged.some((patch) => patch.fullName !== undefined)).toBe(true);
      const store = new SqliteUserStore(file);
      for (const patch of acknowledged) {
        const { created, user } = await store.upsert({ uuid: patch.uuid });
        expect(created).toBe(false);
        expect(user).toMatchObject(patch);
      }
      store.close();
    },
  );

  it("checkpoints as it writes: changes reach the database file, not only its WAL", async () => {
    const file = newFile();
    const store = new SqliteUserStore(file, { synchronous: "normal" });
    // About 20 pages of WAL per upsert: past the 10,000 pages that trigger a checkpoint.
    for (let index = 0; index < 600; index++) {
      await store.upsert({ uuid: "u1", fullName: String(index % 10).repeat(80_000) });
    }
    expect(statSync(file).size).toBeGreaterThan(80_000);
    store.close();
  });

  it("stores extra values as JSON: a string stays a string, a number a number", async () => {
    const store = new SqliteUserStore(":memory:");
    const extra = { zip: "0150", floor: 3, ratio: 0.1 + 0.2, active: false, none: [null] };
    expect((await store.upsert({ uuid: "u1", extra })).user.extra).toEqual(extra);
    store.close();
  });

  it("reads a user with get, and every user with list in the order they were created", async () => {
    const store = new SqliteUserStore(":memory:");
    for (const uuid of ["u2", "u1", "u3"]) await store.upsert({ uuid, username: uuid });
    await store.upsert({ uuid: "u1", extra: { level: 3 } });
    await store.delete("u2");
    await store.upsert({ uuid: "u2" });
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "u1", extra: { level: 3 } });
    expect(await store.get("missing")).toBeUndefined();
    expect(await store.list()).toEqual([
      { uuid: "u1", username: "u1", extra: { level: 3 } },
      { uuid: "u3", username: "u3" },
      { uuid: "u2" },
    ]);
    store.close();
  });

  it("refuses U+0000 in a uuid or a field, which node:sqlite would read back cut short", async () => {
    const store = new SqliteUserStore(":memory:");
    await expect(store.upsert({ uuid: "a\0b" })).rejects.toThrow(
      "SqliteUserStore cannot store a uuid containing U+0000",
    );
    await expect(store.upsert({ uuid: "u1", fullName: "x\0y" })).rejects.toThrow(
      "cannot store a fullName containing U+0000",
    );
    expect(await store.list()).toEqual([]);
    // In extra, as JSON text, it is escaped and kept.
    await store.upsert({ uuid: "u1", extra: { note: "c\0d" } });
    expect(await store.get("u1")).toEqual({ uuid: "u1", extra: { note: "c\0d" } });
    store.close();
  });

  it("counts the users in the table", async () => {
    const store = new SqliteUserStore(":memory:");
    expect(await store.count()).toBe(0);
    await store.upsert({ uuid: "u1" });
    await store.upsert({ uuid: "u2" });
    await store.upsert({ uuid: "u1", username: "bob" });
    expect(await store.count()).toBe(2);
    await store.delete("u2");
    expect(await store.count()).toBe(1);
    store.close();
  });

  describe("synchronous", () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });
    const pragmas = (options?: { synchronous?: "full" | "normal" }) => {
      const exec = vi.spyOn(DatabaseSync.prototype, "exec");
      new SqliteUserStore(newFile(), options).close();
      return exec.mock.calls.map(([sql]) => sql).filter((sql) => sql.includes("synchronous"));
    };

    it("syncs every write to disk by default", () => {
      expect(pragmas()).toEqual(["PRAGMA synchronous = FULL"]);
    });

    it("syncs at checkpoints only with synchronous: normal", () => {
      expect(pragmas({ synchronous: "normal" })).toEqual(["PRAGMA synchronous = NORMAL"]);
    });

    it("refuses any other setting before opening the file", () => {
      const file = newFile();
      expect(() => new SqliteUserStore(file, { synchronous: "off" as "normal" })).toThrow(
        'synchronous must be "full" or "normal", not off',
      );
    });
  });

  it("is ready while open and not ready once closed", () => {
    const store = new SqliteUserStore(":memory:");
    expect(store.ready()).toBe(true);
    store.close();
    expect(store.ready()).toBe(false);
  });
});

describe("platform-integration/sqlite on a runtime without node:sqlite", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.resetModules();
  });
  const message =
    /^platform-integration\/sqlite needs the built-in module node:sqlite, which Node [\d.]+ does not provide: run Node 22\.13 or later/;

  it("throws on import an error that names what it needs (Node 20.16 to 22.12)", async () => {
    vi.spyOn(process, "getBuiltinModule").mockReturnValue(undefined);
    vi.resetModules();
    await expect(import("../../src/stores/sqlite/index.ts")).rejects.toThrow(message);
  });

  it("throws the same error where node:sqlite sits behind a flag", async () => {
    vi.spyOn(process, "getBuiltinModule").mockImplementation(() => {
      throw Object.assign(new Error("No such built-in module: node:sqlite"), {
        code: "ERR_UNKNOWN_BUILTIN_MODULE",
      });
    });
    vi.resetModules();
    await expect(import("../../src/stores/sqlite/index.ts")).rejects.toThrow(message);
  });

  it("throws the same error where process.getBuiltinModule is missing (Node before 20.16)", async () => {
    const runtime = process as { getBuiltinModule?: unknown };
    const getBuiltinModule = runtime.getBuiltinModule;
    runtime.getBuiltinModule = undefined;
    try {
      vi.resetModules();
      await expect(import("../../src/stores/sqlite/index.ts")).rejects.toThrow(message);
    } finally {
      runtime.getBuiltinModule = getBuiltinModule;
    }
  });
});

quarantineScenarios("SqliteUserStore", {
  create: async (rules) => new SqliteUserStore(newFile(), rules),
});

describe("SqliteUserStore's quarantine and unique fields", () => {
  const rules = { unique: ["email"] } as const;

  // Catches: a step that fails inside its transaction and leaves it open (or its prepared BEGIN
  // and COMMIT in a state that refuses the next step), so that every later write fails or is
  // never committed for the other connections.
  it("rolls a failed step back, and the next step begins and commits again", async () => {
    const file = newFile();
    const store = new SqliteUserStore(file, rules);
    const reader = new SqliteUserStore(file, rules);
    try {
      await store.writeQuarantined("create", { uuid: "a", email: "a@x.io" });
      await expect(
        store.writeQuarantined("create", { uuid: "b", email: "b@x.io", username: "nul\0" }),
      ).rejects.toThrow(/U\+0000/);
      await store.writeQuarantined("create", { uuid: "c", email: "c@x.io" });
      expect((await reader.list()).map((user) => user.uuid)).toEqual(["a", "c"]);
    } finally {
      store.close();
      reader.close();
    }
  });

  // Catches: kept messages held in the process (lost on restart) rather than in the file.
  it("keeps the kept messages across a restart, and releases them after it", async () => {
    const file = newFile();
    const before = new SqliteUserStore(file, rules);
    const first = quarantinedHandler(before);
    await first.create({ uuid: "a", email: "x@x.io" });
    await first.create({ uuid: "c", email: "x@x.io", password: "kept-secret" });
    await first.modify({ uuid: "c", first_name: "Cee" });
    before.close();
    const after = new SqliteUserStore(file, rules);
    const second = quarantinedHandler(after);
    expect(
      (await second.handler.quarantined()).map((kept) => [
        kept.uuid,
        kept.operation,
        kept.messages,
      ]),
    ).toEqual([["c", "create", 2]]);
    await second.modify({ uuid: "a", email: "y@x.io" });
    expect(await after.get("c")).toEqual({
      uuid: "c",
      email: "x@x.io",
      password: "kept-secret",
      firstName: "Cee",
    });
    expect(second.changes.map((change) => [change.type, change.uuid])).toEqual([
      ["updated", "a"],
      ["created", "c"],
    ]);
    after.close();
  });

  // Catches: a release that is not one transaction, so two connections apply a message twice.
  it("applies each kept message once, in order, when two stores on one file retry together", async () => {
    const file = newFile();
    const one = quarantinedHandler(new SqliteUserStore(file, rules));
    const twoStore = new SqliteUserStore(file, rules);
    const two = quarantinedHandler(twoStore);
    await one.create({ uuid: "a", email: "x@x.io" });
    await one.create({ uuid: "c", email: "x@x.io" });
    await one.modify({ uuid: "c", username: "cee" });
    await twoStore.delete("a");
    const results = await Promise.all([
      one.handler.retryQuarantined(),
      two.handler.retryQuarantined(),
    ]);
    expect(results.reduce((sum, result) => sum + result.released, 0)).toBe(1);
    const applied = [...one.changes, ...two.changes].filter((change) => change.uuid === "c");
    expect(applied.map((change) => change.type)).toEqual(["created"]);
    expect(await twoStore.get("c")).toEqual({ uuid: "c", email: "x@x.io", username: "cee" });
  });

  /** A new file whose quarantine table has an older version's format, holding `rows`. */
  const oldFormatFile = async (rows: string) => {
    const file = newFile();
    new SqliteUserStore(file, rules).close();
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(file);
    db.exec(`DROP TABLE provisioned_users_quarantine;
      CREATE TABLE provisioned_users_quarantine (id INTEGER PRIMARY KEY AUTOINCREMENT, uuid TEXT NOT NULL,
        operation TEXT NOT NULL, patch TEXT NOT NULL, reason TEXT NOT NULL, field TEXT, since TEXT NOT NULL,
        attempts INTEGER NOT NULL);
      INSERT INTO provisioned_users_quarantine (uuid, operation, patch, reason, field, since, attempts)
      VALUES ${rows};`);
    db.close();
    return file;
  };

  // Catches: an upgrade that drops what an older version kept (acknowledged messages).
  it("merges the kept messages of an older version's file into one pending record per user", async () => {
    const file = await oldFormatFile(`
        ('c', 'create', '{"uuid":"c","email":"x@x.io","firstName":"C"}', 'taken', 'email', '2026-01-01T00:00:00.000Z', 3),
        ('d', 'modify', '{"uuid":"d","username":"dee"}', 'taken', 'email', '2026-01-02T00:00:00.000Z', 1),
        ('c', 'modify', '{"uuid":"c","firstName":"Cee"}', 'behind', NULL, '2026-01-03T00:00:00.000Z', 1)`);
    const store = new SqliteUserStore(file, rules);
    expect(
      (await store.listQuarantined()).map((pending) => [
        pending.uuid,
        pending.messages,
        pending.patch,
      ]),
    ).toEqual([
      ["c", 2, { uuid: "c", email: "x@x.io", firstName: "Cee" }],
      ["d", 1, { uuid: "d", username: "dee" }],
    ]);
    const app = quarantinedHandler(store);
    expect(await app.handler.retryQuarantined()).toEqual({ released: 2, kept: 0 });
    store.close();
  });

  // Attack finding 4. Catches: a replica that reads the old format before taking the write
  // lock, while another replica migrates the file, and then reads the old columns of the new
  // table ("no such column: id"): it must start whatever the others do.
  it("starts on an older version's file while another replica is migrating it", async () => {
    const file = await oldFormatFile(
      `('c', 'create', '{"uuid":"c","email":"x@x.io"}', 'taken', 'email', '2026-01-01T00:00:00.000Z', 1)`,
    );
    // The other replica: inside its write transaction, the quarantine table in the new format.
    const migrating = execFile(process.execPath, [
      "--no-warnings",
      "--input-type=module",
      "--eval",
      `import { DatabaseSync } from "node:sqlite";
      const db = new DatabaseSync(${JSON.stringify(file)});
      db.exec(\`BEGIN IMMEDIATE; DROP TABLE provisioned_users_quarantine;
        CREATE TABLE provisioned_users_quarantine (uuid TEXT PRIMARY KEY NOT NULL, operation TEXT NOT NULL,
          patch TEXT NOT NULL, reason TEXT NOT NULL, fields TEXT NOT NULL, awaits TEXT NOT NULL,
          since TEXT NOT NULL, attempts INTEGER NOT NULL, messages INTEGER NOT NULL) STRICT;
        INSERT INTO provisioned_users_quarantine VALUES ('c', 'create', '{"uuid":"c","email":"x@x.io"}',
          'taken', '[]', '[]', '2026-01-01T00:00:00.000Z', 1, 1)\`);
      console.log("locked");
      setTimeout(() => db.exec("COMMIT"), 300);`,
    ]);
    await new Promise((resolve) => migrating.stdout?.once("data", resolve));
    const store = new SqliteUserStore(file, rules);
    expect((await store.listQuarantined()).map((pending) => pending.uuid)).toEqual(["c"]);
    store.close();
    await new Promise((resolve) => migrating.once("exit", resolve));
  });

  it("makes the unique indexes follow the option, and refuses one the data already breaks", async () => {
    const file = newFile();
    const plain = new SqliteUserStore(file);
    await plain.upsert({ uuid: "a", email: "x@x.io", username: "sam" });
    await plain.upsert({ uuid: "b", email: "X@x.io" });
    plain.close();
    expect(() => new SqliteUserStore(file, { unique: ["email"] })).toThrow(
      /cannot make email unique: two active users already share a value/,
    );
    const strict = new SqliteUserStore(file, { unique: ["username"] });
    await expect(strict.upsert({ uuid: "c", username: "sam" })).rejects.toMatchObject({
      name: "UserConflictError",
      field: "username",
    });
    strict.close();
    const relaxed = new SqliteUserStore(file);
    await expect(relaxed.upsert({ uuid: "c", username: "sam" })).resolves.toMatchObject({
      created: true,
    });
    relaxed.close();
  });
});
