// The store contract's options: how it gets a store, reads one back, and registers its checks
// with the caller's test runner.
import type { UserPatch, UserRecord } from "../user-record.ts";
import type { UserStore } from "../user-store.ts";

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
