// What every suite of the store contract is given: the check registrar (a fresh store per check,
// destroyed after it; a skip that never passes silently), the contract's options and its helpers.
import { assertJsonEqual } from "../../internal/json-equal.ts";
import type { UserRecord } from "../user-record.ts";
import type { UserStore } from "../user-store.ts";
import type { TestContext, UserStoreContractOptions } from "./options.ts";

/** Marks the running check skipped, with why. */
export type Skip = (note: string) => void;

/** A suite's view of one run of the contract. */
export interface ContractKit<Store extends UserStore> {
  options: UserStoreContractOptions<Store>;
  /** How many concurrent operations the concurrency checks start. */
  concurrency: number;
  onDelete: "delete" | "deactivate";
  /** Registers a check that runs on a fresh store. */
  check(name: string, body: (store: Store, skip: Skip) => Promise<void>): void;
  /** A user as stored: through `read` when given, else through an upsert that changes nothing. */
  read(store: Store, uuid: string): Promise<UserRecord | undefined>;
  /** Throws, showing both, unless the two are the same JSON data. */
  equal(actual: unknown, expected: unknown, what: string): void;
}

/** The kit of one run of the contract, with the options' defaults applied. */
export function contractKit<Store extends UserStore>(
  options: UserStoreContractOptions<Store>,
): ContractKit<Store> {
  const { it, concurrency = 32, onDelete = "delete" } = options;
  return {
    options,
    concurrency,
    onDelete,
    // Rest parameters keep the body's `length` at 0: Jest takes a body with a parameter for a
    // callback-style test.
    check: (name, body) =>
      void it(name, async (...args: (TestContext | undefined)[]) => {
        const skip = skipper(args[0]);
        const store = await options.create();
        try {
          await body(store, skip);
        } finally {
          await options.destroy?.(store);
        }
      }),
    read: async (store, uuid) =>
      options.read ? options.read(store, uuid) : (await store.upsert({ uuid })).user,
    equal: assertJsonEqual,
  };
}

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
