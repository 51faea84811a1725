// The contract's isolation and concurrency: a write changes only its user, concurrent upserts of
// one user lose no update, and concurrent creations each create once.
import type { UserStore } from "../user-store.ts";
import type { ContractKit } from "./kit.ts";

/** The checks of isolation between users and of atomic upserts under concurrency. */
export function concurrencyChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, concurrency } = kit;
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
    const results = await Promise.all(uuids.map((uuid) => store.upsert({ uuid, username: uuid })));
    equal(results.filter((result) => !result.created).length, 0, "upserts that did not create");
    for (const uuid of uuids) {
      equal(await read(store, uuid), { uuid, username: uuid }, `the user ${uuid}`);
    }
  });
}
