// The contract's quarantine methods: one pending record per uuid merging every kept message, a
// freed value waking the uuid that awaits it, release and delete as single steps, atomic per uuid.
import type { QuarantineMethods } from "../quarantine-store.ts";
import type { UserStore } from "../user-store.ts";
import type { ContractKit, Skip } from "./kit.ts";
import type { UserStoreContractOptions } from "./options.ts";

/** The checks of the quarantine methods, skipped where the store lacks them. */
export function quarantineChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  stepChecks(kit);
  atomicityCheck(kit);
}

/** The store's quarantine methods, or a skip. */
function quarantineOf(store: UserStore, skip: Skip): QuarantineMethods | undefined {
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
}

/** The store's quarantine and the options' conflict pair, or a skip. */
function conflicting(
  store: UserStore,
  skip: Skip,
  options: Pick<UserStoreContractOptions, "conflict">,
) {
  const quarantine = quarantineOf(store, skip);
  if (!quarantine) return undefined;
  if (!options.conflict) {
    skip("needs the conflict option");
    return undefined;
  }
  const { holder, refused } = options.conflict;
  return { quarantine, holder, refused };
}

/** Each step on its own: applied, kept and merged, woken and released, deleted and discarded. */
function stepChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, options } = kit;
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
      equal(await quarantine.releaseQuarantined("q1"), { outcome: "none", wakes: [] }, "a release");
      equal(await quarantine.listQuarantined(), [], "nothing pending");
    },
  );

  check(
    "keeps a conflict as one pending record per uuid, merging every later message into it",
    async (store, skip) => {
      const subject = conflicting(store, skip, options);
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
      const subject = conflicting(store, skip, options);
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
    const subject = conflicting(store, skip, options);
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
}

/** The steps of many uuids at once, each uuid's atomic. */
function atomicityCheck<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, options, concurrency } = kit;
  // Catches: a pending record read, merged and written back outside the uuid's lock (a lost
  // message), and a delete whose discard is a second step (the user comes back).
  check(
    "stays atomic per uuid under concurrent writes, releases and deletes",
    async (store, skip) => {
      const subject = conflicting(store, skip, options);
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
}
