// A type test (vitest's typecheck): each bundled store's reads are promises, so a read used where
// its value is expected, without `await`, does not compile. (A parameter typed `any`, as
// Express's `res.json`, accepts anything: there the promise's toJSON throws instead.)
import type { Response } from "express";
import { expectTypeOf, it } from "vitest";
import {
  MemoryUserStore,
  type UserRecord,
  type UserStoreReads,
} from "../../src/provisioning/index.ts";
import type { PostgresUserStore } from "../../src/stores/postgres/index.ts";
import type { SqliteUserStore } from "../../src/stores/sqlite/index.ts";

it("gives every bundled store the same reads, each a promise", () => {
  expectTypeOf<MemoryUserStore>().toExtend<UserStoreReads>();
  expectTypeOf<SqliteUserStore>().toExtend<UserStoreReads>();
  expectTypeOf<PostgresUserStore>().toExtend<UserStoreReads>();
  expectTypeOf<SqliteUserStore["list"]>().toEqualTypeOf<PostgresUserStore["list"]>();
  expectTypeOf<MemoryUserStore["count"]>().toEqualTypeOf<PostgresUserStore["count"]>();
  expectTypeOf<SqliteUserStore["get"]>().toEqualTypeOf<PostgresUserStore["get"]>();
});

it("refuses a read used without await where its value is expected", async () => {
  const store = new MemoryUserStore();
  // @ts-expect-error: a promise is not an array
  const users: UserRecord[] = store.list();
  // @ts-expect-error: no length on a promise
  store.list().length;
  // @ts-expect-error: a promise is not a number
  const total: number = store.count();
  // @ts-expect-error: no fields on a promise
  store.get("u1")?.username;
  // A typed response (Response<UserRecord[]>) refuses the promise too.
  const send = (res: Response<UserRecord[]>) => {
    // @ts-expect-error: res.json takes the list, not its promise
    res.json(store.list());
    return async () => res.json(await store.list());
  };
  expectTypeOf([users, total, send]).not.toBeAny();
  expectTypeOf(await store.list()).toEqualTypeOf<UserRecord[]>();
});
