// The contract's reads (`get`, `list`, `count`, as UserStoreReads): each a promise, deactivated
// users left out unless asked, copies the caller may change.
import type { UserRecord } from "../user-record.ts";
import type { UserStore, UserStoreReads } from "../user-store.ts";
import type { ContractKit, Skip } from "./kit.ts";

/** The checks of the reads the store has, skipped where it has none. */
export function readChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, onDelete } = kit;
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
}
