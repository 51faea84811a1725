// The bundled stores' reads, one shape: promises, whatever the database. A read handed to a
// serializer without `await` throws, where it used to send `{}` silently.
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryUserStore, type UserStoreReads } from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";

const stores: [string, () => MemoryUserStore | SqliteUserStore][] = [
  ["MemoryUserStore", () => new MemoryUserStore()],
  ["SqliteUserStore", () => new SqliteUserStore(":memory:")],
];

describe.each(stores)("%s's reads", (_name, create) => {
  const opened: (MemoryUserStore | SqliteUserStore)[] = [];
  const store = () => {
    const made = create();
    opened.push(made);
    return made;
  };
  afterEach(() => {
    for (const made of opened.splice(0)) if (made instanceof SqliteUserStore) made.close();
  });

  it("return promises", async () => {
    const users: UserStoreReads = store();
    await (users as unknown as SqliteUserStore).upsert({ uuid: "u1", username: "bob" });
    const reads = [users.get("u1"), users.list(), users.count()];
    for (const read of reads) expect(read).toBeInstanceOf(Promise);
    expect(await Promise.all(reads)).toEqual([
      { uuid: "u1", username: "bob" },
      [{ uuid: "u1", username: "bob" }],
      1,
    ]);
  });

  // Catches: a read whose promise serializes as {} (what res.json(store.list()) sent).
  it("throw a TypeError naming the fix when serialized without await", async () => {
    const users = store();
    await users.upsert({ uuid: "u1" });
    expect(() => JSON.stringify(users.list())).toThrow(
      new TypeError(
        "store.list() returns a promise: await it before serializing it (res.json(await store.list()))",
      ),
    );
    expect(() => JSON.stringify({ user: users.get("u1") })).toThrow(/^store\.get\(uuid\) returns/);
    expect(() => JSON.stringify(users.count())).toThrow(/^store\.count\(\) returns/);
    expect(JSON.stringify(await users.list())).toBe('[{"uuid":"u1"}]');
  });

  it("answer 500 in Express for res.json(store.list()), and the list once awaited", async () => {
    const users = store();
    await users.upsert({ uuid: "u1", username: "bob" });
    const app = express();
    app.get("/forgot-await", (_req, res) => {
      // What swapping to a store with promised reads used to send as {} without a word.
      res.json(users.list());
    });
    app.get("/users", async (_req, res) => {
      res.json(await users.list());
    });
    // Express's own error handler would print the error; the test's only says it was the read.
    let reported: unknown;
    app.use(
      (
        error: unknown,
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        reported = error;
        res.status(500).json({ error: "internal" });
      },
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const forgot = await fetch(`${base}/forgot-await`);
      expect(forgot.status).toBe(500);
      expect(String(reported)).toMatch(/^TypeError: store\.list\(\) returns a promise/);
      const listed = await fetch(`${base}/users`);
      expect(await listed.json()).toEqual([{ uuid: "u1", username: "bob" }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// Catches: a read that throws synchronously, which a caller chaining .catch() would not see.
it("SqliteUserStore's reads reject, rather than throw, when the database fails", async () => {
  const users = new SqliteUserStore(":memory:");
  users.close();
  for (const read of [() => users.get("u1"), () => users.list(), () => users.count()]) {
    await expect(read()).rejects.toThrow(/statement has been finalized/);
  }
});
