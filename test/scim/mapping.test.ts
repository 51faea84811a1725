// The mapping between a stored user and its SCIM form (src/scim/mapping.ts), where a store holds
// users SCIM did not write: one without a username is served with its id as userName, which is
// never written back.
import { describe, expect, it } from "vitest";
import { patchOp, scim, setup } from "./helpers.ts";

const base = "/scim/v2";

describe("a stored user without a username (written by the Provisioning API)", () => {
  it("is served with its id as userName, also when listed", async () => {
    const { store, handler } = setup();
    await store.upsert({ uuid: "p-1", email: "p1@example.com" });
    await store.upsert({ uuid: "p-2", username: "  ", email: "p2@example.com" });
    expect((await scim(handler, "GET", `${base}/Users/p-1`)).body.userName).toBe("p-1");
    const listed = (await scim(handler, "GET", `${base}/Users`)).body.Resources;
    expect(listed.map((user: { userName: string }) => user.userName)).toEqual(["p-1", "p-2"]);
  });

  it("takes a PATCH that leaves userName alone, and an Okta PUT of what it read, without writing the id as username", async () => {
    const { store, handler } = setup({}, { unique: ["username"] });
    await store.upsert({ uuid: "p-1", email: "p1@example.com" });
    await store.upsert({ uuid: "p-2", username: "", email: "p2@example.com" });
    const patched = await scim(handler, "PATCH", `${base}/Users/p-1`, {
      schemas: [patchOp],
      Operations: [{ op: "Replace", path: "active", value: "False" }],
    });
    expect([patched.status, patched.body.active, patched.body.userName]).toEqual([
      200,
      false,
      "p-1",
    ]);
    const stored = await store.get("p-1");
    expect(stored?.username).toBeUndefined();
    expect(stored?.extra?.scim).not.toHaveProperty("userName");
    const read = (await scim(handler, "GET", `${base}/Users/p-2`)).body;
    const put = await scim(handler, "PUT", `${base}/Users/p-2`, { ...read, title: "t" });
    expect([put.status, put.body.title, put.body.userName]).toEqual([200, "t", "p-2"]);
    expect((await store.get("p-2"))?.username).toBe("");
  });

  it("gets the userName an identity provider gives it", async () => {
    const { store, handler } = setup();
    await store.upsert({ uuid: "p-1", email: "p1@example.com" });
    const answer = await scim(handler, "PATCH", `${base}/Users/p-1`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "userName", value: "pat" }],
    });
    expect([answer.status, answer.body.userName]).toEqual([200, "pat"]);
    expect((await store.get("p-1"))?.username).toBe("pat");
  });
});
