import { assertJsonEqual } from "../../internal/json-equal.ts";
import type { QuarantineMethods } from "../quarantine-store.ts";
import { isUserConflict } from "../user-conflict-error.ts";
import type { UserPatch, UserRecord } from "../user-record.ts";
import type { UserStore, UserStoreReads } from "../user-store.ts";
import { replaceChecks } from "./replace.ts";

/** What a test runner passes to a test: {@link testUserStore} marks checks skipped through it. */
export interface TestContext {
  /** Marks the running test as skipped (vitest's `context.skip`, node:test's `t.skip`). */
  skip?(note?: string): void;
}

/** The two functions of a test runner that {@link testUserStore} registers its checks with. */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  /** `body` is called with the runner's test context, if it passes one. */
  it(name: string, body: (context?: TestContext) => Promise<void>): unknown;
}

/** How {@link testUserStore} gets a store, and the runner to register its checks with. */
export interface UserStoreContractOptions<Store extends UserStore = UserStore> extends TestRunner {
  /** Makes an empty store; called once for every check. */
  create(): Store | Promise<Store>;
  /** Closes or removes what `create` made; called after every check, with that store. */
  destroy?(store: Store): void | Promise<void>;
  /**
   * Reads a user from the database by another way than the store's `upsert` (another
   * connection, a plain query), or undefined when there is none. With it, the contract checks
   * what was stored, not only what `upsert` answered; without it, it reads a user back through an
   * upsert of `{ uuid }` alone, which changes nothing, and skips the checks that need a read.
   */
  read?(store: Store, uuid: string): UserRecord | undefined | Promise<UserRecord | undefined>;
  /** How many concurrent operations the concurrency checks start (default 32). */
  concurrency?: number;
  /**
   * What the store's delete does: `"delete"` (default) removes the user; `"deactivate"` keeps the
   * row with `deactivatedAt` set, and a later upsert creates the user afresh from the patch alone
   * (see the bundled stores' `onDelete`). With `conflict` too, the contract checks that a
   * deactivated user holds no unique value.
   */
  onDelete?: "delete" | "deactivate";
  /**
   * Two patches the store refuses together, for the quarantine's checks: after `holder` is
   * stored, `refused` throws a `UserConflictError` (a unique email both carry, for instance).
   * Without it, the check of a message that conflicts again is skipped.
   */
  conflict?: { holder: UserPatch; refused: UserPatch };
}

/**
 * Registers the UserStore contract as tests with your runner: merge semantics (absent keeps,
 * `null` clears), idempotent redelivery, delete of a missing user (or deactivation, with
 * `onDelete: "deactivate"`: a later upsert creates the user afresh from the patch alone, and a
 * deactivated user holds no unique value), reset and readiness when implemented, atomic upserts under
 * concurrency (no lost update), the reads when implemented (`get`, `list` and `count` together,
 * each returning a promise, as {@link UserStoreReads}: what they return, deactivated users left out
 * unless asked, copies the caller may change), and the quarantine methods when implemented (one
 * pending record per uuid merging every kept message, password and all; a freed value waking the
 * uuid that awaits it; release and delete as single steps; all of it atomic per uuid under
 * concurrent callers). Every store must pass it.
 *
 * A check that does not apply to the store (reset or readiness that it does not implement, or a
 * check that needs `read`) is marked skipped through the test context (vitest, node:test), never
 * counted as passed; with a runner that passes no context, it fails and says why.
 *
 * @example
 * ```ts
 * import { describe, it } from "vitest";
 * import { testUserStore } from "platform-integration/testing";
 *
 * testUserStore({
 *   describe,
 *   it,
 *   create: () => new MyUserStore(),
 *   destroy: (store) => store.close(),
 *   read: (store, uuid) => store.get(uuid),
 * });
 * ```
 */
export function testUserStore<Store extends UserStore>(
  options: UserStoreContractOptions<Store>,
): void {
  const { describe, it, concurrency = 32, onDelete = "delete" } = options;
  // Rest parameters keep the body's `length` at 0: Jest takes a body with a parameter for a
  // callback-style test.
  const check = (name: string, body: (store: Store, skip: Skip) => Promise<void>) =>
    it(name, async (...args: (TestContext | undefined)[]) => {
      const skip = skipper(args[0]);
      const store = await options.create();
      try {
        await body(store, skip);
      } finally {
        await options.destroy?.(store);
      }
    });
  // A user as stored: through `read` when given, else through an upsert that changes nothing.
  const read = async (store: Store, uuid: string): Promise<UserRecord | undefined> =>
    options.read ? options.read(store, uuid) : (await store.upsert({ uuid })).user;
  const equal = assertJsonEqual;

  describe("UserStore contract", () => {
    check("creates a user and reports that it created it", async (store) => {
      const patch = {
        uuid: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a",
        username: "bob",
        email: "b@x.io",
      };
      equal(await store.upsert(patch), { created: true, user: patch }, "upsert's answer");
      equal(await read(store, patch.uuid), patch, "the stored user");
    });

    check("answers a redelivered create with the same user, not a second one", async (store) => {
      const patch = { uuid: "u1", username: "bob", firstName: "Bob" };
      await store.upsert(patch);
      equal(await store.upsert(patch), { created: false, user: patch }, "the second answer");
      equal(await read(store, "u1"), patch, "the stored user");
    });

    check(
      "merges: absent fields keep their value, null clears, empty string is kept",
      async (store) => {
        await store.upsert({ uuid: "u1", username: "bob", firstName: "Bob", lastName: "Stone" });
        const { created, user } = await store.upsert({ uuid: "u1", firstName: null, lastName: "" });
        equal(created, false, "created");
        equal(user, { uuid: "u1", username: "bob", lastName: "" }, "the merged user");
        equal(await read(store, "u1"), user, "the stored user");
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
      equal((await store.upsert(patch)).user, patch, "upsert's user");
      equal(await read(store, "u1"), patch, "the stored user");
    });

    check("merges extra fields key by key, keeping __proto__ a plain key", async (store) => {
      const extra = JSON.parse('{"__proto__":{"polluted":true},"dept":"R&D","level":3}');
      await store.upsert({ uuid: "u1", extra });
      const { user } = await store.upsert({ uuid: "u1", extra: { dept: null, tags: ["a", "b"] } });
      const merged = JSON.parse('{"__proto__":{"polluted":true},"level":3,"tags":["a","b"]}');
      equal(user.extra, merged, "the merged extra");
      equal((await read(store, "u1"))?.extra, merged, "the stored extra");
      equal(({} as Record<string, unknown>).polluted, undefined, "Object.prototype.polluted");
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
      equal(user.extra, { address, code: "007" }, "the merged extra");
      equal((await read(store, "u1"))?.extra, user.extra, "the stored extra");
    });

    check("keeps uuids with reserved URL characters and non-ASCII text", async (store) => {
      const uuid = "cn=Bjørk Guðmundsdóttir/ou=?#%20&+ 😀";
      await store.upsert({ uuid, fullName: "Bjørk Guðmundsdóttir 😀" });
      equal(await read(store, uuid), { uuid, fullName: "Bjørk Guðmundsdóttir 😀" }, "the user");
      equal(await store.delete(uuid), { deleted: true }, "delete's answer");
    });

    check("deletes a user, and succeeds for a user that does not exist", async (store) => {
      await store.upsert({ uuid: "u1" });
      equal(await store.delete("u1"), { deleted: true }, "the first delete");
      equal(await store.delete("u1"), { deleted: false }, "the second delete");
      equal(await store.delete("never-seen"), { deleted: false }, "deleting an unknown user");
      equal((await store.upsert({ uuid: "u1" })).created, true, "created again");
    });

    if (onDelete === "delete") {
      check("leaves nothing of a deleted user in the database", async (store, skip) => {
        if (!options.read) return skip("needs the read option to look at the database");
        await store.upsert({ uuid: "u1", username: "bob", extra: { level: 3 } });
        await store.delete("u1");
        equal(await read(store, "u1"), undefined, "the deleted user");
      });
    } else {
      check(
        "deactivates a deleted user, and creates it afresh from the next upsert alone",
        async (store, skip) => {
          if (!options.read) return skip("needs the read option to look at the database");
          await store.upsert({ uuid: "u1", username: "bob", extra: { level: 3 } });
          await store.delete("u1");
          const deactivated = await read(store, "u1");
          const at = deactivated?.deactivatedAt;
          equal(
            typeof at === "string" && !Number.isNaN(Date.parse(at)),
            true,
            "deactivatedAt is an ISO timestamp",
          );
          equal(
            deactivated,
            { uuid: "u1", username: "bob", extra: { level: 3 }, deactivatedAt: at },
            "the row kept",
          );
          await store.delete("u1");
          equal(
            (await read(store, "u1"))?.deactivatedAt,
            at,
            "deactivatedAt after a second delete",
          );
          // The directory deleted the user: what comes back is what it sends now, nothing of
          // the old record (its username, its extra), and the write is a creation.
          const again = { uuid: "u1", firstName: "Bob", extra: { level: null, team: "B" } };
          const active = { uuid: "u1", firstName: "Bob", extra: { team: "B" } };
          equal(await store.upsert(again), { created: true, user: active }, "upsert's answer");
          equal(await read(store, "u1"), active, "the stored user");
          equal(
            await store.upsert({ uuid: "u1", lastName: "Stone" }),
            { created: false, user: { ...active, lastName: "Stone" } },
            "the next upsert merges as usual",
          );
          // A modify (a patch with one field) of a deactivated user creates it from that alone.
          await store.delete("u1");
          equal(
            await store.upsert({ uuid: "u1", username: "bobby" }),
            { created: true, user: { uuid: "u1", username: "bobby" } },
            "a modify of a deactivated user",
          );
        },
      );

      check(
        "lets a deactivated user hold no unique value, and refuses one an active user took",
        async (store, skip) => {
          if (!options.conflict) return skip("needs the conflict option (a unique field)");
          const { holder, refused } = options.conflict;
          await store.upsert(holder);
          await store.delete(holder.uuid);
          // The directory deleted the holder: its value is free for an active user.
          equal((await store.upsert(refused)).created, true, "the other user takes the value");
          // Re-created with the value the other user now holds, the holder is refused...
          const error = await store.upsert(holder).then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
          equal(isUserConflict(error), true, "the re-creation throws a UserConflictError");
          if (options.read) {
            equal(
              typeof (await read(store, holder.uuid))?.deactivatedAt,
              "string",
              "the refused user stays deactivated",
            );
          }
          // ...and re-created without it, comes back without it: the old value is not restored.
          equal(
            await store.upsert({ uuid: holder.uuid }),
            { created: true, user: { uuid: holder.uuid } },
            "re-created without the value",
          );
        },
      );
    }

    check("changes only the user it is given", async (store) => {
      await store.upsert({ uuid: "a", username: "a" });
      await store.upsert({ uuid: "b", username: "b" });
      await store.upsert({ uuid: "a", username: "changed" });
      await store.delete("a");
      equal(await read(store, "b"), { uuid: "b", username: "b" }, "the other user");
    });

    check("loses no update when upserts of one user run concurrently", async (store) => {
      const fields = Array.from({ length: concurrency }, (_, index) => `field${index}`);
      const results = await Promise.all(
        fields.map((field) => store.upsert({ uuid: "u1", extra: { [field]: field } })),
      );
      equal(results.filter((result) => result.created).length, 1, "upserts that created");
      const stored = Object.keys((await read(store, "u1"))?.extra ?? {});
      equal(stored.sort(), [...fields].sort(), "the stored extra keys");
    });

    check("creates many users concurrently, each exactly once", async (store) => {
      const uuids = Array.from({ length: concurrency }, (_, index) => `user-${index}`);
      const results = await Promise.all(
        uuids.map((uuid) => store.upsert({ uuid, username: uuid })),
      );
      equal(results.filter((result) => !result.created).length, 0, "upserts that did not create");
      for (const uuid of uuids) {
        equal(await read(store, uuid), { uuid, username: uuid }, `the user ${uuid}`);
      }
    });

    check("removes every user on reset", async (store, skip) => {
      if (!store.reset) return skip("the store has no reset()");
      await store.upsert({ uuid: "a" });
      await store.upsert({ uuid: "b" });
      await store.reset();
      if (options.read) equal(await read(store, "a"), undefined, "a user after reset");
      equal((await store.upsert({ uuid: "a" })).created, true, "created again after reset");
      equal((await store.upsert({ uuid: "b" })).created, true, "created again after reset");
    });

    check("reports ready once created", async (store, skip) => {
      if (!store.ready) return skip("the store has no ready()");
      equal(await store.ready(), true, "ready()");
    });

    // The reads the store has, of get, list and count (UserStoreReads); skipped when none.
    const readsOf = (store: Store, skip: Skip): Partial<UserStoreReads> | undefined => {
      const reads = store as unknown as Partial<UserStoreReads>;
      if (reads.get || reads.list || reads.count) return reads;
      skip("the store has no reads (get, list, count)");
      return undefined;
    };
    // The value of a read, which must be a promise: a synchronous read breaks every caller that
    // swaps stores, silently where it is serialized (res.json of a promise sends {}).
    const promised = async <T>(value: T | Promise<T>, call: string): Promise<T> => {
      if (typeof (value as { then?: unknown } | undefined)?.then !== "function") {
        throw new Error(
          `${call} must return a promise (UserStoreReads), not ${JSON.stringify(value)}`,
        );
      }
      return await value;
    };
    const byUuid = (users: (UserRecord | undefined)[]) =>
      [...users].sort((a, b) => ((a?.uuid ?? "") < (b?.uuid ?? "") ? -1 : 1));

    check("reads users back through get, list and count, each a promise", async (store, skip) => {
      const reads = readsOf(store, skip);
      if (!reads) return;
      const bob = { uuid: "u2", username: "bob", extra: { level: 3 } };
      const eve = { uuid: "u1", username: "eve" };
      await store.upsert(bob);
      await store.upsert(eve);
      if (reads.get) {
        equal(await promised(reads.get("u2"), "get(uuid)"), bob, "get of a stored user");
        equal(await promised(reads.get("missing"), "get(uuid)"), undefined, "get of no user");
      }
      if (reads.list) {
        equal(byUuid(await promised(reads.list(), "list()")), [eve, bob], "list(), by uuid");
      }
      if (reads.count) equal(await promised(reads.count(), "count()"), 2, "count()");
    });

    check(
      onDelete === "delete"
        ? "leaves a deleted user out of get, list and count"
        : "leaves a deactivated user out of list and count unless asked, and get shows it",
      async (store, skip) => {
        const reads = readsOf(store, skip);
        if (!reads) return;
        await store.upsert({ uuid: "a", username: "a" });
        await store.upsert({ uuid: "b", username: "b" });
        await store.delete("a");
        const b = { uuid: "b", username: "b" };
        const all = { includeDeactivated: true };
        if (reads.list) equal(await reads.list(), [b], "list()");
        if (reads.count) equal(await reads.count(), 1, "count()");
        if (onDelete === "delete") {
          if (reads.get) equal(await reads.get("a"), undefined, "get of the deleted user");
          if (reads.list) equal(await reads.list(all), [b], "list({ includeDeactivated: true })");
          if (reads.count) equal(await reads.count(all), 1, "count({ includeDeactivated: true })");
          return;
        }
        const deactivated = reads.get ? await reads.get("a") : undefined;
        if (reads.get) {
          equal(typeof deactivated?.deactivatedAt, "string", "deactivatedAt of get's user");
        }
        if (reads.list) {
          const listed = byUuid(await reads.list(all));
          equal(
            listed[0]?.uuid,
            "a",
            "list({ includeDeactivated: true }) takes the deactivated user",
          );
          equal(typeof listed[0]?.deactivatedAt, "string", "its deactivatedAt");
          if (deactivated) equal(listed, [deactivated, b], "list({ includeDeactivated: true })");
        }
        if (reads.count) equal(await reads.count(all), 2, "count({ includeDeactivated: true })");
      },
    );

    check("hands out copies: changing a user read changes nothing stored", async (store, skip) => {
      const reads = readsOf(store, skip);
      if (!reads) return;
      const bob = { uuid: "u1", username: "bob", extra: { tags: ["a"] } };
      await store.upsert(bob);
      const got = reads.get ? await reads.get("u1") : undefined;
      const [listed] = reads.list ? await reads.list() : [];
      for (const user of [got, listed]) {
        if (user === undefined) continue;
        user.username = "changed";
        (user.extra?.tags as string[] | undefined)?.push("changed");
      }
      if (reads.get) equal(await reads.get("u1"), bob, "get after the change");
      if (reads.list) equal(await reads.list(), [bob], "list after the change");
      equal(await read(store, "u1"), bob, "the stored user");
    });

    const quarantineOf = (store: Store, skip: Skip): QuarantineMethods | undefined => {
      const methods = store as Partial<QuarantineMethods>;
      if (
        methods.writeQuarantined &&
        methods.releaseQuarantined &&
        methods.deleteQuarantined &&
        methods.listQuarantined
      ) {
        return methods as QuarantineMethods;
      }
      skip("the store has no quarantine methods");
      return undefined;
    };
    /** The store's quarantine and its conflict pair, or a skip. */
    const conflicting = (store: Store, skip: Skip) => {
      const quarantine = quarantineOf(store, skip);
      if (!quarantine) return undefined;
      if (!options.conflict) {
        skip("needs the conflict option");
        return undefined;
      }
      const { holder, refused } = options.conflict;
      return { quarantine, holder, refused };
    };

    check(
      "writes through the quarantine: applied at once when nothing is pending",
      async (store, skip) => {
        const quarantine = quarantineOf(store, skip);
        if (!quarantine) return;
        const user = { uuid: "q1", username: "q", password: "kept-as-sent" };
        equal(
          await quarantine.writeQuarantined("create", user),
          { outcome: "applied", result: { created: true, user }, wakes: [] },
          "the step",
        );
        equal(await read(store, "q1"), user, "the stored user");
        equal(
          await quarantine.releaseQuarantined("q1"),
          { outcome: "none", wakes: [] },
          "a release",
        );
        equal(await quarantine.listQuarantined(), [], "nothing pending");
      },
    );

    check(
      "keeps a conflict as one pending record per uuid, merging every later message into it",
      async (store, skip) => {
        const subject = conflicting(store, skip);
        if (!subject) return;
        const { quarantine, holder, refused } = subject;
        await quarantine.writeQuarantined("create", holder);
        const first = await quarantine.writeQuarantined("create", refused);
        equal(first.outcome, "kept", "the first step's outcome");
        if (first.outcome !== "kept") return;
        equal(first.conflict.name, "UserConflictError", "its conflict");
        equal(
          [first.pending.operation, first.pending.attempts, first.pending.messages],
          ["create", 1, 1],
          "the pending record",
        );
        equal(Number.isNaN(Date.parse(first.pending.since)), false, "since is a timestamp");
        const later = { uuid: refused.uuid, firstName: "Later", password: "kept-as-sent" };
        const second = await quarantine.writeQuarantined("modify", later);
        equal(second.outcome, "kept", "a later message: kept with it, tried with it");
        const listed = await quarantine.listQuarantined();
        equal(listed.length, 1, "one record, not one per message");
        equal(
          [listed[0]?.operation, listed[0]?.attempts, listed[0]?.messages, listed[0]?.since],
          ["create", 2, 2, first.pending.since],
          "the record after two messages",
        );
        equal(listed[0]?.patch, { ...refused, ...later }, "the merge of both, password and all");
        equal(await quarantine.listQuarantined({ uuid: refused.uuid }), listed, "by uuid");
        equal(await quarantine.listQuarantined({ uuid: "nobody" }), [], "another uuid");
        equal(await read(store, refused.uuid), undefined, "nothing stored for it");
      },
    );

    check(
      "wakes a pending uuid when its value is freed, and releases it in one step",
      async (store, skip) => {
        const subject = conflicting(store, skip);
        if (!subject) return;
        const { quarantine, holder, refused } = subject;
        await quarantine.writeQuarantined("create", holder);
        const kept = await quarantine.writeQuarantined("create", refused);
        const deleted = await quarantine.deleteQuarantined(holder.uuid);
        equal(deleted.outcome, "deleted", "the holder's delete");
        if (kept.outcome === "kept" && kept.pending.awaits.length > 0) {
          equal(deleted.wakes, [refused.uuid], "the uuids it wakes");
        }
        const released = await quarantine.releaseQuarantined(refused.uuid);
        equal(released.outcome, "released", "the release");
        if (released.outcome === "released") {
          equal(released.result, { created: true, user: refused }, "its upsert");
          equal(released.pending.patch, refused, "the record that left");
        }
        equal(await read(store, refused.uuid), refused, "the stored user");
        equal(await quarantine.listQuarantined(), [], "nothing pending");
        equal(
          await quarantine.releaseQuarantined(refused.uuid),
          { outcome: "none", wakes: [] },
          "a second release",
        );
      },
    );

    check("deletes a user and discards its pending record in one step", async (store, skip) => {
      const subject = conflicting(store, skip);
      if (!subject) return;
      const { quarantine, holder, refused } = subject;
      await quarantine.writeQuarantined("create", holder);
      await quarantine.writeQuarantined("create", refused);
      const step = await quarantine.deleteQuarantined(refused.uuid);
      equal(step.outcome, "deleted", "the outcome");
      if (step.outcome === "deleted") {
        equal([step.deleted, step.discarded?.patch], [false, refused], "deleted, discarded");
      }
      equal(await quarantine.listQuarantined(), [], "nothing pending");
      equal(await read(store, holder.uuid), holder, "the holder stays");
    });

    // Catches: a pending record read, merged and written back outside the uuid's lock (a lost
    // message), and a delete whose discard is a second step (the user comes back).
    check(
      "stays atomic per uuid under concurrent writes, releases and deletes",
      async (store, skip) => {
        const subject = conflicting(store, skip);
        if (!subject) return;
        const { quarantine, holder, refused } = subject;
        await quarantine.writeQuarantined("create", holder);
        const uuids = Array.from({ length: concurrency }, (_, index) => `${refused.uuid}-${index}`);
        // Each uuid gets its refused create, then four modifies, all at once.
        await Promise.all(
          uuids.map((uuid) => quarantine.writeQuarantined("create", { ...refused, uuid })),
        );
        await Promise.all(
          uuids.flatMap((uuid) =>
            [1, 2, 3, 4].map((key) =>
              quarantine.writeQuarantined("modify", { uuid, extra: { [`k${key}`]: key } }),
            ),
          ),
        );
        const pending = await quarantine.listQuarantined();
        equal(pending.length, uuids.length, "one record per uuid");
        for (const record of pending) {
          equal(
            [record.messages, record.patch.extra],
            [5, { k1: 1, k2: 2, k3: 3, k4: 4 }],
            `the record of ${record.uuid}: every message merged`,
          );
        }
        // Free the value, then release and delete every uuid at once: a delete always wins in
        // the end, whichever step comes first.
        await quarantine.deleteQuarantined(holder.uuid);
        await Promise.all(
          uuids.flatMap((uuid) => [
            quarantine.releaseQuarantined(uuid),
            quarantine.deleteQuarantined(uuid),
            quarantine.releaseQuarantined(uuid),
          ]),
        );
        equal(await quarantine.listQuarantined(), [], "nothing pending");
        for (const uuid of uuids) {
          const user = await read(store, uuid);
          equal(
            user === undefined || user.deactivatedAt !== undefined,
            true,
            `${uuid} deleted, not brought back`,
          );
        }
      },
    );
    replaceChecks({ options, onDelete, check, read, equal });
  });
}

/** Marks the running check skipped, with why. */
type Skip = (note: string) => void;

function skipper(context: TestContext | undefined): Skip {
  return (note) => {
    if (typeof context?.skip !== "function") {
      throw new Error(
        `This check does not apply (${note}), and the runner gave no way to mark it skipped.`,
      );
    }
    // vitest's skip throws to end the test; node:test's only marks it, and the check returns.
    context.skip(note);
  };
}
