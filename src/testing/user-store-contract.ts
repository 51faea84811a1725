import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { UserPatch, UserRecord, UserStore } from "../provisioning/index.ts";

/** The two functions of a test runner that {@link testUserStore} registers its checks with. */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
}

/** How {@link testUserStore} gets a store, and the runner to register its checks with. */
export interface UserStoreContractOptions extends TestRunner {
  /** Makes an empty store; called once for every check. */
  create(): UserStore | Promise<UserStore>;
  /** Closes or removes what `create` made; called after every check. */
  destroy?(store: UserStore): void | Promise<void>;
  /** How many concurrent operations the concurrency checks start (default 32). */
  concurrency?: number;
}

/**
 * Registers the UserStore contract as tests with your runner: merge semantics (absent keeps,
 * `null` clears), idempotent redelivery, delete of a missing user, reset and readiness when
 * implemented, and atomic upserts under concurrency (no lost update). Every store must pass it.
 *
 * The contract reads a user back through an upsert of `{ uuid }` alone, which changes nothing.
 *
 * @example
 * ```ts
 * import { describe, it } from "vitest";
 * import { testUserStore } from "platform-integration/testing";
 * testUserStore({ describe, it, create: () => new SqliteUserStore(":memory:") });
 * ```
 */
export function testUserStore(options: UserStoreContractOptions): void {
  const { describe, it, concurrency = 32 } = options;
  const check = (name: string, body: (store: UserStore) => Promise<void>) =>
    it(name, async () => {
      const store = await options.create();
      try {
        await body(store);
      } finally {
        await options.destroy?.(store);
      }
    });
  const read = async (store: UserStore, uuid: string): Promise<UserRecord> =>
    (await store.upsert({ uuid })).user;

  describe("UserStore contract", () => {
    check("creates a user and reports that it created it", async (store) => {
      const patch = {
        uuid: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a",
        username: "bob",
        email: "b@x.io",
      };
      deepStrictEqual(await store.upsert(patch), { created: true, user: patch });
    });

    check("answers a redelivered create with the same user, not a second one", async (store) => {
      const patch = { uuid: "u1", username: "bob", firstName: "Bob" };
      await store.upsert(patch);
      deepStrictEqual(await store.upsert(patch), { created: false, user: patch });
    });

    check(
      "merges: absent fields keep their value, null clears, empty string is kept",
      async (store) => {
        await store.upsert({ uuid: "u1", username: "bob", firstName: "Bob", lastName: "Stone" });
        const { created, user } = await store.upsert({ uuid: "u1", firstName: null, lastName: "" });
        strictEqual(created, false);
        deepStrictEqual(user, { uuid: "u1", username: "bob", lastName: "" });
        deepStrictEqual(await read(store, "u1"), user);
      },
    );

    check("stores every documented field", async (store) => {
      const patch: UserPatch = {
        uuid: "u1",
        userId: "1001",
        username: "bob",
        firstName: "Bob",
        lastName: "Stone",
        fullName: "Bob Stone",
        passwordFormat: "sha256",
        password: "secret",
        email: "bob@example.com",
      };
      deepStrictEqual((await store.upsert(patch)).user, patch);
    });

    check("merges extra fields key by key, keeping __proto__ a plain key", async (store) => {
      const extra = JSON.parse('{"__proto__":{"polluted":true},"dept":"R&D","level":3}');
      await store.upsert({ uuid: "u1", extra });
      const { user } = await store.upsert({ uuid: "u1", extra: { dept: null, tags: ["a", "b"] } });
      deepStrictEqual(
        user.extra,
        JSON.parse('{"__proto__":{"polluted":true},"level":3,"tags":["a","b"]}'),
      );
      strictEqual(({} as Record<string, unknown>).polluted, undefined);
    });

    check("replaces each extra value whole and keeps it exactly as sent", async (store) => {
      await store.upsert({ uuid: "u1", extra: { address: { city: "Oslo", zip: "0150" } } });
      // A recursive merge (JSON merge patch, jsonb_strip_nulls) would keep `zip` and drop `floor`.
      const address = {
        city: "Bergen",
        floor: null,
        ratio: 0.1 + 0.2,
        lift: false,
        rooms: [1, null],
      };
      const { user } = await store.upsert({ uuid: "u1", extra: { address, code: "007" } });
      deepStrictEqual(user.extra, { address, code: "007" });
      deepStrictEqual((await read(store, "u1")).extra, user.extra);
    });

    check("keeps uuids with reserved URL characters and non-ASCII text", async (store) => {
      const uuid = "cn=Bjørk Guðmundsdóttir/ou=?#%20&+ 😀";
      await store.upsert({ uuid, fullName: "Bjørk Guðmundsdóttir 😀" });
      deepStrictEqual(await read(store, uuid), { uuid, fullName: "Bjørk Guðmundsdóttir 😀" });
      deepStrictEqual(await store.delete(uuid), { deleted: true });
    });

    check("deletes a user, and succeeds for a user that does not exist", async (store) => {
      await store.upsert({ uuid: "u1" });
      deepStrictEqual(await store.delete("u1"), { deleted: true });
      deepStrictEqual(await store.delete("u1"), { deleted: false });
      deepStrictEqual(await store.delete("never-seen"), { deleted: false });
      strictEqual((await store.upsert({ uuid: "u1" })).created, true);
    });

    check("changes only the user it is given", async (store) => {
      await store.upsert({ uuid: "a", username: "a" });
      await store.upsert({ uuid: "b", username: "b" });
      await store.upsert({ uuid: "a", username: "changed" });
      await store.delete("a");
      deepStrictEqual(await read(store, "b"), { uuid: "b", username: "b" });
    });

    check("loses no update when upserts of one user run concurrently", async (store) => {
      const fields = Array.from({ length: concurrency }, (_, index) => `field${index}`);
      const results = await Promise.all(
        fields.map((field) => store.upsert({ uuid: "u1", extra: { [field]: field } })),
      );
      strictEqual(results.filter((result) => result.created).length, 1);
      deepStrictEqual(
        Object.keys((await read(store, "u1")).extra ?? {}).sort(),
        [...fields].sort(),
      );
    });

    check("creates many users concurrently, each exactly once", async (store) => {
      const uuids = Array.from({ length: concurrency }, (_, index) => `user-${index}`);
      const results = await Promise.all(
        uuids.map((uuid) => store.upsert({ uuid, username: uuid })),
      );
      strictEqual(
        results.every((result) => result.created),
        true,
      );
      for (const uuid of uuids) deepStrictEqual(await read(store, uuid), { uuid, username: uuid });
    });

    check("removes every user on reset, when the store implements reset", async (store) => {
      if (!store.reset) return;
      await store.upsert({ uuid: "a" });
      await store.upsert({ uuid: "b" });
      await store.reset();
      strictEqual((await store.upsert({ uuid: "a" })).created, true);
      strictEqual((await store.upsert({ uuid: "b" })).created, true);
    });

    check("reports ready once created, when the store implements ready", async (store) => {
      if (!store.ready) return;
      strictEqual(await store.ready(), true);
    });
  });
}
