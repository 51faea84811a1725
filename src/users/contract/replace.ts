// The contract's whole-record writes and look-ups (`replace`, `findUsers`): what a second protocol
// over the same store (the SCIM server) needs. Each check is skipped for a store without them.
import { isUserConflict } from "../user-conflict-error.ts";
import type { UserPatch, UserRecord } from "../user-record.ts";
import type { UserStore, UserStoreReads } from "../user-store.ts";
import type { ContractKit, Skip } from "./kit.ts";

type Replacing = UserStore & Required<Pick<UserStore, "replace">>;

/** The store as one with `replace`, or undefined after skipping the check. */
function replacing(store: UserStore, skip: Skip): Replacing | undefined {
  if (typeof store.replace === "function") return store as Replacing;
  skip("the store has no replace()");
  return undefined;
}

/** The store's reads, or undefined after skipping the check. */
function readsOf(store: UserStore, skip: Skip): UserStoreReads | undefined {
  const reads = store as unknown as Partial<UserStoreReads>;
  if (reads.get && reads.list && reads.count) return reads as UserStoreReads;
  skip("the store has no reads (get, list, count)");
  return undefined;
}

/** The checks of `replace`, skipped where the store has none. */
export function replaceChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, options, onDelete } = kit;

  check(
    "replace writes a user whole: it creates, and clears what a later record omits",
    async (store, skip) => {
      const s = replacing(store, skip);
      if (!s) return;
      const first: UserRecord = {
        uuid: "u1",
        username: "bob",
        email: "bob@example.com",
        extra: { scim: { externalId: "X-1", active: true }, level: 3 },
      };
      equal(await s.replace(first), first, "replace's answer for a new user");
      if (options.read) equal(await read(store, "u1"), first, "the stored user");
      const second: UserRecord = {
        uuid: "u1",
        firstName: "Bob",
        extra: { scim: { externalId: "X-1" } },
      };
      equal(await s.replace(second), second, "replace's answer: username, email and level cleared");
      if (options.read) equal(await read(store, "u1"), second, "the stored user");
      // The merge still works on a replaced user.
      equal(
        (await store.upsert({ uuid: "u1", lastName: "Stone" })).user,
        { ...second, lastName: "Stone" },
        "an upsert after",
      );
    },
  );

  check(
    "replace deactivates without deleting, and reactivates with the record",
    async (store, skip) => {
      const s = replacing(store, skip);
      const reads = s && readsOf(store, skip);
      if (!s || !reads) return;
      const at = "2026-01-02T03:04:05.000Z";
      const user: UserRecord = { uuid: "u1", username: "dee", extra: { scim: { active: false } } };
      equal(
        await s.replace({ ...user, deactivatedAt: at }),
        { ...user, deactivatedAt: at },
        "replace's answer",
      );
      equal(
        await reads.get("u1"),
        { ...user, deactivatedAt: at },
        "get shows the deactivated user",
      );
      equal(await reads.list(), [], "list leaves it out");
      equal(await reads.count(), 0, "count leaves it out");
      equal(
        await reads.list({ includeDeactivated: true }),
        [{ ...user, deactivatedAt: at }],
        "list when asked",
      );
      const back = { ...user, extra: { scim: { active: true } } };
      equal(await s.replace(back), back, "reactivated by a replace without deactivatedAt");
      equal(await reads.list(), [back], "listed again");
    },
  );

  check(
    "a user replace deactivated holds no unique value; reactivating into a taken one is refused",
    async (store, skip) => {
      const s = replacing(store, skip);
      if (!s) return;
      if (!options.conflict)
        return skip("needs the conflict option (two records sharing a unique value)");
      const { holder, refused } = options.conflict;
      const asRecord = (patch: UserPatch): UserRecord =>
        Object.fromEntries(
          Object.entries(patch).filter(([, value]) => value !== null),
        ) as unknown as UserRecord;
      await s.replace(asRecord(holder));
      const taken = await s.replace(asRecord(refused)).then(
        () => undefined,
        (error: unknown) => error,
      );
      equal(
        isUserConflict(taken),
        true,
        "replace into a value an active user holds throws UserConflictError",
      );
      // Through the store itself: a read by another way may open the database afresh, and
      // a bundled store opened without the unique option drops its indexes.
      const get = (store as unknown as Partial<UserStoreReads>).get;
      if (get) equal(await get.call(store, refused.uuid), undefined, "and stores nothing");
      const at = "2026-01-02T03:04:05.000Z";
      await s.replace({ ...asRecord(holder), deactivatedAt: at });
      await s.replace(asRecord(refused));
      const again = await s.replace(asRecord(holder)).then(
        () => undefined,
        (error: unknown) => error,
      );
      equal(isUserConflict(again), true, "reactivating the holder into its taken value throws");
      if (options.read)
        equal((await read(store, holder.uuid))?.deactivatedAt, at, "the holder stays deactivated");
    },
  );

  check(
    onDelete === "delete"
      ? "delete removes a user replace deactivated"
      : "delete leaves a user replace deactivated as it is",
    async (store, skip) => {
      const s = replacing(store, skip);
      if (!s) return;
      if (!options.read) return skip("needs the read option to look at the database");
      const user: UserRecord = {
        uuid: "u1",
        username: "dee",
        deactivatedAt: "2026-01-02T03:04:05.000Z",
      };
      await s.replace(user);
      await store.delete("u1");
      equal(
        await read(store, "u1"),
        onDelete === "delete" ? undefined : user,
        "the user after delete",
      );
    },
  );
}

/** The checks of `findUsers`, skipped where the store has none. */
export function findUsersChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal } = kit;
  check(
    "findUsers finds by a field (ASCII case ignored when asked) and by an extra path, deactivated users too",
    async (store, skip) => {
      const reads = store as unknown as Partial<UserStoreReads>;
      if (typeof reads.findUsers !== "function") return skip("the store has no findUsers()");
      const a = { uuid: "u1", username: "Élise.Smith", extra: { scim: { externalId: "Ext-1" } } };
      const b = { uuid: "u2", username: "élise.smith", email: "E@x.org" };
      await store.upsert(a);
      await store.upsert(b);
      if (typeof store.replace === "function") {
        await store.replace({
          uuid: "u3",
          username: "ÉLISE.SMITH",
          deactivatedAt: "2026-01-02T03:04:05.000Z",
        });
      }
      const find = async (lookup: Parameters<NonNullable<UserStoreReads["findUsers"]>>[0]) =>
        ((await reads.findUsers?.(lookup)) ?? []).map((user) => user.uuid).sort();
      equal(await find({ field: "username", value: "Élise.Smith" }), ["u1"], "exact");
      equal(
        await find({ field: "username", value: "élise.SMITH", ignoreCase: true }),
        ["u2"],
        "ASCII case only",
      );
      equal(
        await find({ field: "username", value: "ÉLISE.smith", ignoreCase: true }),
        typeof store.replace === "function" ? ["u1", "u3"] : ["u1"],
        "a deactivated user too",
      );
      equal(await find({ field: "email", value: "e@X.ORG", ignoreCase: true }), ["u2"], "email");
      equal(await find({ extra: ["scim", "externalId"], value: "Ext-1" }), ["u1"], "an extra path");
      equal(
        await find({ extra: ["scim", "externalId"], value: "ext-1" }),
        [],
        "an extra path, exactly",
      );
      equal(await find({ extra: ["level", "x"], value: "1" }), [], "a path that is not there");
    },
  );
}

/**
 * The checks of `replace(user, { expected })`, the conditional write that keeps two replicas'
 * read-and-write cycles from losing each other's change; skipped where the store has no replace.
 */
export function conditionalReplaceChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, concurrency } = kit;
  check(
    "replace with expected writes only over the user as it was read, else resolves undefined",
    async (store, skip) => {
      const s = replacing(store, skip);
      const reads = s && readsOf(store, skip);
      if (!s || !reads) return;
      // Written by merges, so that a store keeping JSON text may hold its keys in another order
      // than a record read back has them ("1" sorts first in a JavaScript object).
      await store.upsert({ uuid: "u1", username: "ann", extra: { b: { y: 1, "2": 2 } } });
      await store.upsert({ uuid: "u1", extra: { "1": "one" } });
      const seen = await reads.get("u1");
      if (seen === undefined) throw new Error("get did not find the user an upsert created");
      const next: UserRecord = { uuid: "u1", username: "ann", firstName: "Ann" };
      equal(await s.replace(next, { expected: seen }), next, "the write over the user as read");
      equal(await reads.get("u1"), next, "the stored user");
      equal(
        await s.replace({ uuid: "u1", username: "lost" }, { expected: seen }),
        undefined,
        "a write over a user that changed since it was read",
      );
      equal(await reads.get("u1"), next, "stores nothing");
      const at = "2026-01-02T03:04:05.000Z";
      equal(
        await s.replace(
          { ...next, deactivatedAt: at },
          { expected: { ...next, deactivatedAt: at } },
        ),
        undefined,
        "expected differing in deactivatedAt alone",
      );
      equal(
        await s.replace({ uuid: "u9", username: "new" }, { expected: { uuid: "u9" } }),
        undefined,
        "a write over a user that is not there",
      );
      equal(await reads.get("u9"), undefined, "creates nothing");
    },
  );

  check("concurrent read-and-replace loops with expected lose no change", async (store, skip) => {
    const s = replacing(store, skip);
    const reads = s && readsOf(store, skip);
    if (!s || !reads) return;
    await s.replace({ uuid: "u1", username: "ann" });
    const fields = Array.from({ length: concurrency }, (_, index) => `field${index}`);
    // Each round, of the callers that read the same user, one writes; so each caller writes
    // within `concurrency` attempts.
    const attempts = await Promise.all(
      fields.map(async (field) => {
        for (let attempt = 1; attempt <= concurrency; attempt++) {
          const user = await reads.get("u1");
          if (user === undefined) throw new Error("the user is gone");
          const written = await s.replace(
            { ...user, extra: { ...user.extra, [field]: field } },
            { expected: user },
          );
          if (written !== undefined) return attempt;
        }
        return Number.POSITIVE_INFINITY;
      }),
    );
    equal(
      attempts.every((count) => count <= concurrency),
      true,
      "every caller wrote within as many attempts as there are callers",
    );
    const stored = Object.keys((await reads.get("u1"))?.extra ?? {});
    equal(stored.sort(), [...fields].sort(), "the stored extra keys: every caller's change");
  });
}
