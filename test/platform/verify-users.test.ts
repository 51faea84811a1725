import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  compareUser,
  describeUserDifference,
  maxListedDifferences,
  verifyUsers,
} from "../../src/platform/verify-users.ts";
import type { UserRecord } from "../../src/provisioning/index.ts";

const bob: UserRecord = { uuid: "bob", username: "bob", firstName: "Bob", email: "bob@acme.test" };
const eve: UserRecord = { uuid: "eve", username: "eve", fullName: "Ève Ångström" };

/** An application's store, read back as the read route would, with no delay or a given one. */
function storeOf(users: UserRecord[], delayOf: (uuid: string) => number = () => 0) {
  const stored = new Map(users.map((user) => [user.uuid, structuredClone(user)]));
  let inFlight = 0;
  const store = {
    stored,
    reads: [] as string[],
    mostInFlight: 0,
    async read(uuid: string) {
      store.reads.push(uuid);
      store.mostInFlight = Math.max(store.mostInFlight, ++inFlight);
      await sleep(delayOf(uuid));
      inFlight--;
      return structuredClone(stored.get(uuid));
    },
  };
  return store;
}

describe("verifyUsers", () => {
  it("reports nothing when every user is stored as expected and every deleted one is gone", async () => {
    const store = storeOf([bob, eve]);
    const report = await verifyUsers(store.read, { present: [bob, eve], gone: ["old"] });
    expect(report).toEqual({ checked: 3, complete: true, differenceCount: 0, differences: [] });
    expect(store.reads.toSorted()).toEqual(["bob", "eve", "old"]);
  });

  it("lists each differing field with both values, a missing user and a user still stored", async () => {
    const { email: _, ...withoutEmail } = bob;
    const store = storeOf([{ ...withoutEmail, firstName: "Robert" }, { uuid: "old" }]);
    const report = await verifyUsers(store.read, { present: [bob, eve], gone: ["old"] });
    expect(report).toEqual({
      checked: 3,
      complete: true,
      differenceCount: 4,
      differences: [
        { uuid: "bob", field: "firstName", expected: "Bob", found: "Robert" },
        { uuid: "bob", field: "email", expected: "bob@acme.test" },
        { uuid: "eve", field: "user", problem: "missing" },
        { uuid: "old", field: "user", problem: "still stored" },
      ],
    });
    expect(report.differences.map(describeUserDifference)).toEqual([
      'first_name: expected "Bob", found "Robert"',
      'email: expected "bob@acme.test", found absent',
      "not found",
      "still stored",
    ]);
  });

  it("does not compare the password or its format, which an application may hash", async () => {
    const sent = { ...bob, password: "secret", passwordFormat: "plain" };
    const hashed = { ...bob, password: "$argon2id$...", passwordFormat: "argon2id", email: "x@y" };
    const report = await verifyUsers(storeOf([hashed]).read, { present: [sent] });
    expect(report.differences).toEqual([
      { uuid: "bob", field: "email", expected: "bob@acme.test", found: "x@y" },
    ]);
    expect(JSON.stringify(report)).not.toContain("secret");
  });

  // Issue 37, finding 7: a store with onDelete: "deactivate" keeps the row; read back with its
  // marker, the user is deleted as the platform sees it. Catches a reader that calls it stored.
  it("reads a user the application keeps deactivated as deleted", () => {
    const kept = { ...bob, deactivatedAt: "2026-11-29T08:00:00.000Z" };
    expect(compareUser("bob", undefined, kept)).toEqual([]);
    expect(compareUser("bob", bob, kept)).toEqual([
      { uuid: "bob", field: "user", problem: "missing" },
    ]);
  });

  it("reports an application that answers with another user's record", () => {
    expect(compareUser("bob", bob, { ...bob, uuid: "BOB" })).toEqual([
      { uuid: "bob", field: "uuid", expected: "bob", found: "BOB" },
    ]);
  });

  it("lists the first 1,000 differences in the expected order and counts them all", async () => {
    const users = Array.from({ length: 600 }, (_, index) => ({
      uuid: `u${String(index).padStart(3, "0")}`,
      username: `user${index}`,
      email: `user${index}@example.test`,
    }));
    // Every user stored with two wrong fields, read back out of order.
    const store = storeOf(
      users.map((user) => ({ ...user, username: "wrong", email: "wrong" })),
      (uuid) => Number(uuid.slice(1)) % 3,
    );
    const report = await verifyUsers(store.read, { present: users, gone: ["u000"] });
    expect(report.checked).toBe(601);
    expect(report.differenceCount).toBe(1201);
    expect(report.differences).toHaveLength(maxListedDifferences);
    expect(report.differences.map(({ uuid, field }) => `${uuid} ${field}`)).toEqual(
      users.flatMap(({ uuid }) => [`${uuid} username`, `${uuid} email`]).slice(0, 1000),
    );
  });

  it("reads a few users at a time, from a stream as well as from a list", async () => {
    const users = Array.from({ length: 40 }, (_, index) => ({ uuid: `u${index}` }));
    const store = storeOf(users, () => 2);
    async function* pages() {
      for (let index = 0; index < users.length; index += 7) yield* users.slice(index, index + 7);
    }
    const report = await verifyUsers(store.read, { present: pages() });
    expect(report).toMatchObject({ checked: 40, complete: true, differenceCount: 0 });
    expect(store.reads.toSorted()).toEqual(users.map(({ uuid }) => uuid).toSorted());
    expect(store.mostInFlight).toBeGreaterThan(1);
    expect(store.mostInFlight).toBeLessThanOrEqual(8);
  });

  it("reports a read that fails as that user's difference and checks the others", async () => {
    const store = storeOf([bob, eve]);
    const read = async (uuid: string) => {
      if (uuid === "bob") throw new Error("the read route answered 500, not 200 or 404");
      return store.read(uuid);
    };
    const report = await verifyUsers(read, { present: [bob, eve] });
    expect(report).toMatchObject({ checked: 2, complete: true, differenceCount: 1 });
    expect(report.differences.map(describeUserDifference)).toEqual([
      "the read route answered 500, not 200 or 404",
    ]);
  });

  it("stops when the signal aborts, says the report is incomplete and closes the stream", async () => {
    const users = Array.from({ length: 100 }, (_, index) => ({ uuid: `u${index}` }));
    const controller = new AbortController();
    let closed = false;
    async function* stream() {
      try {
        yield* users;
      } finally {
        closed = true;
      }
    }
    const store = storeOf(users);
    const read = async (uuid: string) => {
      if (uuid === "u20") controller.abort();
      return store.read(uuid);
    };
    const report = await verifyUsers(read, { present: stream(), signal: controller.signal });
    expect(report.complete).toBe(false);
    expect(report.checked).toBeGreaterThan(20);
    expect(report.checked).toBeLessThan(100);
    expect(closed).toBe(true);
  });
});
