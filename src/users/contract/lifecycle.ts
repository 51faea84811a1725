// The contract's optional lifecycle methods: `reset` removes every user, `ready` answers true.
import type { UserStore } from "../user-store.ts";
import type { ContractKit } from "./kit.ts";

/** The checks of `reset` and `ready`, skipped where the store lacks them. */
export function lifecycleChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, options } = kit;
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
}
