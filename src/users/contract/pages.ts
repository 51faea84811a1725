// The contract's pages (`listPage`, as UserStoreReads): a slice of `list`'s order with the total,
// which deactivated users an extra match takes in, and copies; skipped where the store has none.
import type { UserRecord } from "../user-record.ts";
import type { UserPageOptions, UserStore, UserStoreReads } from "../user-store.ts";
import type { ContractKit, Skip } from "./kit.ts";

type Paging = Required<Pick<UserStoreReads, "listPage" | "list" | "count">>;

/** The store's listPage beside list and count, or undefined after skipping the check. */
function pagingOf(store: UserStore, skip: Skip): Paging | undefined {
  const reads = store as unknown as Partial<UserStoreReads>;
  if (typeof reads.listPage !== "function") {
    skip("the store has no listPage()");
    return undefined;
  }
  if (!reads.list || !reads.count) {
    skip("the store has listPage() but not list() and count() to compare it with");
    return undefined;
  }
  return reads as Paging;
}

/** The checks of `listPage`. */
export function pageChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal } = kit;

  check(
    "listPage reads any slice of list's order, with count's total on every page, as copies",
    async (store, skip) => {
      const reads = pagingOf(store, skip);
      if (!reads) return;
      // Created out of uuid order, so that a store's order (creation, uuid) is not the test's.
      for (const uuid of ["u3", "u1", "u5", "u2", "u4"]) {
        await store.upsert({ uuid, username: `name-${uuid}`, extra: { tags: [uuid] } });
      }
      await store.delete("u2");
      for (const includeDeactivated of [false, true]) {
        const all = await reads.list({ includeDeactivated });
        const total = await reads.count({ includeDeactivated });
        for (let offset = 0; offset <= all.length + 1; offset++) {
          for (const limit of [0, 1, 2, all.length + 1]) {
            const options: UserPageOptions = { offset, limit, includeDeactivated };
            equal(
              await reads.listPage(options),
              { users: all.slice(offset, offset + limit), total },
              `listPage(${JSON.stringify(options)})`,
            );
          }
        }
      }
      equal(
        await reads.listPage({ limit: 2 }),
        { users: (await reads.list()).slice(0, 2), total: await reads.count() },
        "listPage without an offset: from the first",
      );
      const page = await reads.listPage({ limit: 1 });
      const first = page.users[0] as UserRecord;
      first.username = "changed";
      (first.extra?.tags as string[] | undefined)?.push("changed");
      equal((await reads.listPage({ limit: 1 })).users, (await reads.list()).slice(0, 1), "copies");
    },
  );

  check(
    "listPage takes in the deactivated users whose extra matches, exactly as JSON data",
    async (store, skip) => {
      const reads = pagingOf(store, skip);
      if (!reads) return;
      if (typeof store.replace !== "function") return skip("the store has no replace()");
      const at = "2026-01-02T03:04:05.000Z";
      const users: UserRecord[] = [
        { uuid: "a1", username: "active", extra: { scim: { active: true } } },
        { uuid: "d1", deactivatedAt: at, extra: { scim: { active: false, state: "gone" } } },
        { uuid: "d2", deactivatedAt: at, extra: { scim: { active: true, state: "Gone" } } },
        { uuid: "d3", deactivatedAt: at, extra: { scim: { active: "false", state: ["gone"] } } },
        { uuid: "d4", deactivatedAt: at, extra: { other: { active: false, state: 5 } } },
        { uuid: "d5", deactivatedAt: at },
        { uuid: "d6", deactivatedAt: at, extra: { scim: [false] } },
      ];
      for (const user of users) await store.replace(user);
      const uuids = async (options: UserPageOptions) =>
        (await reads.listPage(options)).users.map((user) => user.uuid).sort();
      const totalOf = async (options: UserPageOptions) => (await reads.listPage(options)).total;
      const byBoolean = { extra: ["scim", "active"], value: false } as const;
      equal(await uuids({ limit: 10, includeDeactivated: byBoolean }), ["a1", "d1"], "false");
      equal(await totalOf({ limit: 0, includeDeactivated: byBoolean }), 2, "its total");
      const byText = { extra: ["scim", "state"], value: "gone" } as const;
      equal(await uuids({ limit: 10, includeDeactivated: byText }), ["a1", "d1"], '"gone"');
      const byNumberText = { extra: ["other", "state"], value: "5" } as const;
      equal(await uuids({ limit: 10, includeDeactivated: byNumberText }), ["a1"], '"5", not 5');
      equal(
        await totalOf({ offset: 5, limit: 1, includeDeactivated: byBoolean }),
        2,
        "the total of a page past the end",
      );
    },
  );
}
