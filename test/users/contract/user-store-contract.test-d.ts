import { describe, expectTypeOf, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { testUserStore, type UserStoreContractOptions } from "../../../src/testing/index.ts";

describe("testUserStore", () => {
  it("hands create's own store type to destroy and read", () => {
    class ClosableStore extends MemoryUserStore {
      closed = false;
      close(): void {
        this.closed = true;
      }
    }
    const options: UserStoreContractOptions<ClosableStore> = {
      describe,
      it,
      create: () => new ClosableStore(),
      // The README's line, without a cast.
      destroy: (store) => store.close(),
      read: (store, uuid) => store.get(uuid),
    };
    expectTypeOf(options.destroy).parameter(0).toEqualTypeOf<ClosableStore>();
    expectTypeOf(testUserStore<ClosableStore>)
      .parameter(0)
      .toEqualTypeOf(options);
  });
});
