// The contract's deletes: a delete that succeeds for a missing user, and what a deleted user
// leaves, removed (`onDelete: "delete"`) or deactivated, holding no unique value.
import { isUserConflict } from "../user-conflict-error.ts";
import type { UserStore } from "../user-store.ts";
import type { ContractKit } from "./kit.ts";

/** The checks of `delete`, by the store's `onDelete`. */
export function deletionChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read, options, onDelete } = kit;
  check("deletes a user, and succeeds for a user that does not exist", async (store) => {
    await store.upsert({ uuid: "u1" });
    equal(await store.delete("u1"), { deleted: true }, "the first delete");
    equal(await store.delete("u1"), { deleted: false }, "the second delete");
    equal(await store.delete("never-seen"), { deleted: false }, "deleting an unknown user");
    equal((await store.upsert({ uuid: "u1" })).created, true, "created again");
  });

  if (onDelete === "delete") {
    check("leaves nothing of a deleted user in the database", async (store, skip) => {
      if (!options.read) return skip("needs the read option to look at the database");
      await store.upsert({ uuid: "u1", username: "bob", extra: { level: 3 } });
      await store.delete("u1");
      equal(await read(store, "u1"), undefined, "the deleted user");
    });
  } else {
    check(
      "deactivates a deleted user, and creates it afresh from the next upsert alone",
      async (store, skip) => {
        if (!options.read) return skip("needs the read option to look at the database");
        await store.upsert({ uuid: "u1", username: "bob", extra: { level: 3 } });
        await store.delete("u1");
        const deactivated = await read(store, "u1");
        const at = deactivated?.deactivatedAt;
        equal(
          typeof at === "string" && !Number.isNaN(Date.parse(at)),
          true,
          "deactivatedAt is an ISO timestamp",
        );
        equal(
          deactivated,
          { uuid: "u1", username: "bob", extra: { level: 3 }, deactivatedAt: at },
          "the row kept",
        );
        await store.delete("u1");
        equal((await read(store, "u1"))?.deactivatedAt, at, "deactivatedAt after a second delete");
        // The directory deleted the user: what comes back is what it sends now, nothing of
        // the old record (its username, its extra), and the write is a creation.
        const again = { uuid: "u1", firstName: "Bob", extra: { level: null, team: "B" } };
        const active = { uuid: "u1", firstName: "Bob", extra: { team: "B" } };
        equal(await store.upsert(again), { created: true, user: active }, "upsert's answer");
        equal(await read(store, "u1"), active, "the stored user");
        equal(
          await store.upsert({ uuid: "u1", lastName: "Stone" }),
          { created: false, user: { ...active, lastName: "Stone" } },
          "the next upsert merges as usual",
        );
        // A modify (a patch with one field) of a deactivated user creates it from that alone.
        await store.delete("u1");
        equal(
          await store.upsert({ uuid: "u1", username: "bobby" }),
          { created: true, user: { uuid: "u1", username: "bobby" } },
          "a modify of a deactivated user",
        );
      },
    );

    check(
      "lets a deactivated user hold no unique value, and refuses one an active user took",
      async (store, skip) => {
        if (!options.conflict) return skip("needs the conflict option (a unique field)");
        const { holder, refused } = options.conflict;
        await store.upsert(holder);
        await store.delete(holder.uuid);
        // The directory deleted the holder: its value is free for an active user.
        equal((await store.upsert(refused)).created, true, "the other user takes the value");
        // Re-created with the value the other user now holds, the holder is refused...
        const error = await store.upsert(holder).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        equal(isUserConflict(error), true, "the re-creation throws a UserConflictError");
        if (options.read) {
          equal(
            typeof (await read(store, holder.uuid))?.deactivatedAt,
            "string",
            "the refused user stays deactivated",
          );
        }
        // ...and re-created without it, comes back without it: the old value is not restored.
        equal(
          await store.upsert({ uuid: holder.uuid }),
          { created: true, user: { uuid: holder.uuid } },
          "re-created without the value",
        );
      },
    );
  }
}
