import { describe, expect, it } from "vitest";
import { MemoryUserStore, userRecordSchema } from "../../src/provisioning/index.ts";

describe("MemoryUserStore", () => {
  it("creates, then merges: absent fields keep their value, null clears", async () => {
    const store = new MemoryUserStore();
    expect(await store.upsert({ uuid: "u1", username: "bob", email: "bob@example.com" })).toEqual({
      created: true,
      user: { uuid: "u1", username: "bob", email: "bob@example.com" },
    });
    const second = await store.upsert({ uuid: "u1", email: null, firstName: "Bob" });
    expect(second).toEqual({
      created: false,
      user: { uuid: "u1", username: "bob", firstName: "Bob" },
    });
    expect(await store.get("u1")).toEqual(second.user);
  });

  it("merges extra fields key by key and keeps __proto__ a plain key", async () => {
    const store = new MemoryUserStore();
    await store.upsert({
      uuid: "u1",
      extra: JSON.parse('{"__proto__":{"polluted":true},"dept":"R&D"}'),
    });
    await store.upsert({ uuid: "u1", extra: { dept: null, site: "Oslo" } });
    const user = await store.get("u1");
    expect(user?.extra).toEqual(JSON.parse('{"__proto__":{"polluted":true},"site":"Oslo"}'));
    expect(Object.getPrototypeOf(user?.extra)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("hands out copies: changing an upsert's user or its extra changes nothing stored", async () => {
    const store = new MemoryUserStore();
    const { user } = await store.upsert({ uuid: "u1", username: "bob", extra: { site: "Oslo" } });
    user.username = "mallory";
    (user.extra as Record<string, unknown>).site = "Paris";
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "bob", extra: { site: "Oslo" } });
    const got = await store.get("u1");
    (got?.extra as Record<string, unknown>).site = "Rome";
    expect((await store.get("u1"))?.extra).toEqual({ site: "Oslo" });
  });

  it("deletes idempotently, lists copies and resets", async () => {
    const store = new MemoryUserStore();
    await store.upsert({ uuid: "a" });
    await store.upsert({ uuid: "b", username: "b" });
    const listed = await store.list();
    expect(listed.map((user) => user.uuid)).toEqual(["a", "b"]);
    listed[1]!.username = "changed";
    expect((await store.get("b"))?.username).toBe("b");
    expect(await store.delete("a")).toEqual({ deleted: true });
    expect(await store.delete("a")).toEqual({ deleted: false });
    await store.reset();
    expect(await store.list()).toEqual([]);
  });

  // Catches: a merge that drops the stored extra when a patch brings none, and one that leaves an
  // empty `extra: {}` (or `extra: undefined`, which userRecordSchema refuses) behind.
  it("keeps extra through a patch without one, and drops it once its last key is cleared", async () => {
    const store = new MemoryUserStore();
    await store.upsert({ uuid: "u1", extra: { dept: "R&D" } });
    expect((await store.upsert({ uuid: "u1", username: "bob" })).user).toEqual({
      uuid: "u1",
      username: "bob",
      extra: { dept: "R&D" },
    });
    const { user } = await store.upsert({ uuid: "u1", extra: { dept: null } });
    expect(Object.keys(user)).toEqual(["uuid", "username"]);
    const stored = await store.get("u1");
    expect(Object.keys(stored ?? {})).toEqual(["uuid", "username"]);
    expect(userRecordSchema.safeParse(stored).success).toBe(true);
  });
});

describe("MemoryUserStore.findUsers by username (an index, kept by every write)", () => {
  const names = async (store: MemoryUserStore, value: string) =>
    (await store.findUsers({ field: "username", value, ignoreCase: true })).map((u) => u.uuid);

  it("follows renames, deletes, replaces, deactivations and reset, in insertion order", async () => {
    const store = new MemoryUserStore({ onDelete: "delete" });
    await store.upsert({ uuid: "u1", username: "Ann" });
    await store.upsert({ uuid: "u2", username: "bob" });
    await store.upsert({ uuid: "u3", username: "ANN" });
    expect(await names(store, "ann")).toEqual(["u1", "u3"]);
    await store.upsert({ uuid: "u1", username: "carl" });
    expect(await names(store, "ann")).toEqual(["u3"]);
    expect(await names(store, "CARL")).toEqual(["u1"]);
    await store.replace({ uuid: "u2", username: "ann", deactivatedAt: "2026-01-01T00:00:00Z" });
    expect(await names(store, "ann")).toEqual(["u2", "u3"]);
    expect(await names(store, "bob")).toEqual([]);
    await store.replace({ uuid: "u3" });
    expect(await names(store, "ann")).toEqual(["u2"]);
    await store.delete("u2");
    expect(await names(store, "ann")).toEqual([]);
    await store.upsert({ uuid: "u2", username: "Carl" });
    expect(await names(store, "carl")).toEqual(["u1", "u2"]);
    expect(
      (await store.findUsers({ field: "username", value: "carl" })).map((u) => u.uuid),
    ).toEqual(["u1"]);
    await store.reset();
    expect(await names(store, "carl")).toEqual([]);
  });
});
