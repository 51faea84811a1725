import { describe, expect, it } from "vitest";
import { userFieldNames } from "../../src/provisioning/index.ts";
import {
  createPlatformSimulator,
  createUserGenerator,
  type DirectoryChange,
} from "../../src/testing/index.ts";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";

describe("createUserGenerator", () => {
  it("gives the same users and changes for the same seed, other ones for another", () => {
    const run = (seed: number | string) => {
      const generator = createUserGenerator({ seed });
      return { users: generator.users(50), changes: generator.changes(20) };
    };
    expect(run(7)).toEqual(run(7));
    expect(run("seven")).toEqual(run("seven"));
    expect(run(7).users).not.toEqual(run(8).users);
    expect(createUserGenerator().users(5)).toEqual(createUserGenerator({ seed: 1 }).users(5));
  });

  it("makes users with every documented field, unique uuids, usernames and emails", () => {
    const users = createUserGenerator({ seed: 3 }).users(2000);
    for (const user of users) {
      expect(Object.keys(user).sort()).toEqual(["uuid", ...userFieldNames].sort());
      expect(user.uuid).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(user.username).toMatch(/^[a-z]+\d*$/);
      expect(user.email).toMatch(new RegExp(`^${user.username}@[a-z.]+$`));
      expect(user.fullName).toBe(`${user.firstName} ${user.lastName}`);
    }
    for (const field of ["uuid", "username", "email", "userId"] as const) {
      expect(new Set(users.map((user) => user[field])).size).toBe(users.length);
    }
  });

  it("marks test users with testPrefix: uuid and username prefixed, email at example.invalid", () => {
    const generator = createUserGenerator({ seed: 3, testPrefix: "conformance" });
    const users = [...generator.users(300), ...generator.changes(300).flatMap(changedUser)];
    for (const user of users) {
      expect(user.uuid).toMatch(/^conformance-[0-9a-f]{8}-/);
      if (user.username !== undefined) expect(user.username).toMatch(/^conformance-[a-z]+\d*$/);
      if (user.email !== undefined) {
        expect(user.email).toMatch(/^conformance-[a-z]+\d*@([a-z]+\.)?example\.invalid$/);
      }
    }
    // The same seed draws the same people either way: only the marks differ.
    const plain = createUserGenerator({ seed: 3 }).users(5);
    const marked = createUserGenerator({ seed: 3, testPrefix: "t" }).users(5);
    expect(marked.map((user) => user.lastName)).toEqual(plain.map((user) => user.lastName));
  });

  it("sometimes makes names outside ASCII, some outside the Latin script", () => {
    const names = createUserGenerator({ seed: 5 })
      .users(500)
      .map((user) => user.fullName ?? "");
    const nonAscii = names.filter((name) => /[^\x20-\x7e]/.test(name));
    expect(nonAscii.length).toBeGreaterThan(50);
    expect(nonAscii.length).toBeLessThan(400);
    expect(
      names.some((name) => /\p{Script=Cyrillic}|\p{Script=Han}|\p{Script=Greek}/u.test(name)),
    ).toBe(true);
  });

  it("makes real changes of users it made and has not removed, which a directory can apply", async () => {
    const generator = createUserGenerator({ seed: 11 });
    const app = createReferenceProvisioning();
    const platform = createPlatformSimulator({ target: app });
    for (const user of generator.users(100)) platform.addUser(user);
    await platform.sync();
    const changes: DirectoryChange[] = [];
    for (let round = 0; round < 5; round++) changes.push(...generator.changes(100));
    for (const change of changes) platform.apply(change);
    // Each change changes something, so each becomes one message.
    expect(platform.pending).toBe(changes.length);
    const types = changes.map((change) => change.type);
    for (const type of ["add", "change", "remove"] as const) {
      expect(types.filter((candidate) => candidate === type).length).toBeGreaterThan(50);
    }
    expect((await platform.sync()).completed).toBe(true);
    expect((await app.store.list()).sort(byUuid)).toEqual(platform.users().sort(byUuid));
  });

  it("adds users when none is left to change", () => {
    const changes = createUserGenerator({ seed: 2 }).changes(3);
    expect(changes.map((change) => change.type)).toEqual([
      "add",
      expect.any(String),
      expect.any(String),
    ]);
  });
});

const byUuid = (a: { uuid: string }, b: { uuid: string }) => a.uuid.localeCompare(b.uuid);

function changedUser(change: DirectoryChange) {
  if (change.type === "add") return [change.user];
  return change.type === "change" ? [change.patch] : [{ uuid: change.uuid }];
}
