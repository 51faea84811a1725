// The store contract every UserStore must pass (`testUserStore`, exported by
// platform-integration/testing): it registers each concern's suite, in order, with the caller's runner.
import type { UserStore } from "../user-store.ts";
import { concurrencyChecks } from "./concurrency.ts";
import { deletionChecks } from "./deletion.ts";
import { contractKit } from "./kit.ts";
import { lifecycleChecks } from "./lifecycle.ts";
import type { UserStoreContractOptions } from "./options.ts";
import { pageChecks } from "./pages.ts";
import { quarantineChecks } from "./quarantine.ts";
import { readChecks } from "./reads.ts";
import { conditionalReplaceChecks, findUsersChecks, replaceChecks } from "./replace.ts";
import { usernameHoldersChecks } from "./usernames.ts";
import { writeChecks } from "./writes.ts";

export type { TestContext, TestRunner, UserStoreContractOptions } from "./options.ts";

/**
 * Registers the UserStore contract as tests with your runner: merge semantics (absent keeps,
 * `null` clears), idempotent redelivery, delete of a missing user (or deactivation, with
 * `onDelete: "deactivate"`: a later upsert creates the user afresh from the patch alone, and a
 * deactivated user holds no unique value), reset and readiness when implemented, atomic upserts under
 * concurrency (no lost update), the reads when implemented (`get`, `list` and `count` together,
 * each returning a promise, as `UserStoreReads` says: what they return, deactivated users left out
 * unless asked, copies the caller may change; `listPage`, when implemented, a slice of `list`'s
 * order with the total), and the quarantine methods when implemented (one
 * pending record per uuid merging every kept message, password and all; a freed value waking the
 * uuid that awaits it; release and delete as single steps; all of it atomic per uuid under
 * concurrent callers), and `replace` and `findUsers` when implemented (a whole-record write, its
 * conditions `expected` and `usernameHolders` each checked atomically with the write under
 * concurrent callers, and the look-ups). Every store must pass it.
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
  const kit = contractKit(options);
  options.describe("UserStore contract", () => {
    writeChecks(kit);
    deletionChecks(kit);
    concurrencyChecks(kit);
    lifecycleChecks(kit);
    readChecks(kit);
    quarantineChecks(kit);
    replaceChecks(kit);
    conditionalReplaceChecks(kit);
    usernameHoldersChecks(kit);
    findUsersChecks(kit);
    pageChecks(kit);
  });
}
