// The contract's writes: creation, redelivery, the merge rule (absent keeps, null clears), extra
// fields merged key by key and kept exactly, and uuids and text kept as sent.
import type { UserPatch } from "../user-record.ts";
import type { UserStore } from "../user-store.ts";
import type { ContractKit } from "./kit.ts";

/** The checks of `upsert`: what it creates, merges and keeps. */
export function writeChecks<Store extends UserStore>(kit: ContractKit<Store>): void {
  const { check, equal, read } = kit;
  check("creates a user and reports that it created it", async (store) => {
    const patch = {
      uuid: "97e86d2d-b076-4d87-b4f6-5e2ce4534d6a",
      username: "bob",
      email: "b@x.io",
    };
    equal(await store.upsert(patch), { created: true, user: patch }, "upsert's answer");
    equal(await read(store, patch.uuid), patch, "the stored user");
  });

  check("answers a redelivered create with the same user, not a second one", async (store) => {
    const patch = { uuid: "u1", username: "bob", firstName: "Bob" };
    await store.upsert(patch);
    equal(await store.upsert(patch), { created: false, user: patch }, "the second answer");
    equal(await read(store, "u1"), patch, "the stored user");
  });

  check(
    "merges: absent fields keep their value, null clears, empty string is kept",
    async (store) => {
      await store.upsert({ uuid: "u1", username: "bob", firstName: "Bob", lastName: "Stone" });
      const { created, user } = await store.upsert({ uuid: "u1", firstName: null, lastName: "" });
      equal(created, false, "created");
      equal(user, { uuid: "u1", username: "bob", lastName: "" }, "the merged user");
      equal(await read(store, "u1"), user, "the stored user");
    },
  );

  check("stores every documented field", async (store) => {
    const patch: UserPatch = {
      uuid: "u1",
      userId: "1001",
      username: "bob",
      firstName: "Bob",
      lastName: "Stone",
      fullName: "Bob Stone",
      passwordFormat: "sha256",
      password: "secret",
      email: "bob@example.com",
    };
    equal((await store.upsert(patch)).user, patch, "upsert's user");
    equal(await read(store, "u1"), patch, "the stored user");
  });

  check("merges extra fields key by key, keeping __proto__ a plain key", async (store) => {
    const extra = JSON.parse('{"__proto__":{"polluted":true},"dept":"R&D","level":3}');
    await store.upsert({ uuid: "u1", extra });
    const { user } = await store.upsert({ uuid: "u1", extra: { dept: null, tags: ["a", "b"] } });
    const merged = JSON.parse('{"__proto__":{"polluted":true},"level":3,"tags":["a","b"]}');
    equal(user.extra, merged, "the merged extra");
    equal((await read(store, "u1"))?.extra, merged, "the stored extra");
    equal(({} as Record<string, unknown>).polluted, undefined, "Object.prototype.polluted");
  });

  check("replaces each extra value whole and keeps it exactly as sent", async (store) => {
    await store.upsert({ uuid: "u1", extra: { address: { city: "Oslo", zip: "0150" } } });
    // A recursive merge (JSON merge patch, jsonb_strip_nulls) would keep `zip` and drop `floor`.
    const address = {
      city: "Bergen",
      floor: null,
      ratio: 0.1 + 0.2,
      lift: false,
      rooms: [1, null],
    };
    const { user } = await store.upsert({ uuid: "u1", extra: { address, code: "007" } });
    equal(user.extra, { address, code: "007" }, "the merged extra");
    equal((await read(store, "u1"))?.extra, user.extra, "the stored extra");
  });

  check("keeps uuids with reserved URL characters and non-ASCII text", async (store) => {
    const uuid = "cn=Bjørk Guðmundsdóttir/ou=?#%20&+ 😀";
    await store.upsert({ uuid, fullName: "Bjørk Guðmundsdóttir 😀" });
    equal(await read(store, uuid), { uuid, fullName: "Bjørk Guðmundsdóttir 😀" }, "the user");
    equal(await store.delete(uuid), { deleted: true }, "delete's answer");
  });
}
