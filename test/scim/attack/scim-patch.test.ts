// Attack: PATCH and PUT. Secrets, reactivation by omission, work bounds of one request.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, patchOp, token } from "./support.ts";

function setup() {
  const store = new MemoryUserStore({ unique: ["username", "email"] });
  return { store, scim: clientOf(createScimHandler({ store, token })) };
}

describe("password (writeOnly, returned never; docs: never stored nor returned)", () => {
  it.each([
    ["Okta's PATCH without path", { op: "replace", value: { password: "S3cret-one!" } }],
    ["a PATCH with path", { op: "replace", path: "password", value: "S3cret-one!" }],
    [
      "a URN-qualified path",
      {
        op: "add",
        path: "urn:ietf:params:scim:schemas:core:2.0:User:password",
        value: "S3cret-one!",
      },
    ],
  ])("%s: the password is neither returned nor stored in clear", async (_name, operation) => {
    const { store, scim } = setup();
    const id = (await scim("POST", "/Users", { userName: "pat" })).body.id as string;
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [operation],
    });
    expect(patched.status).toBeLessThan(300);
    expect(JSON.stringify(patched.body), "PATCH answer").not.toContain("S3cret-one!");
    expect(JSON.stringify((await scim("GET", `/Users/${id}`)).body), "GET").not.toContain(
      "S3cret-one!",
    );
    expect(JSON.stringify((await scim("GET", "/Users")).body), "list").not.toContain("S3cret-one!");
    const oracle = await scim("GET", `/Users?filter=${encodeURIComponent('password sw "S3"')}`);
    expect(oracle.body.totalResults ?? 0, "a filter must not probe the password").toBe(0);
    expect(JSON.stringify(await store.get(id)), "the stored record").not.toContain("S3cret-one!");
  });
});

describe("reactivation by omission", () => {
  async function inactive() {
    const { scim } = setup();
    const user = { userName: "ina", displayName: "Ina", active: false };
    const id = (await scim("POST", "/Users", user)).body.id as string;
    expect((await scim("GET", `/Users/${id}`)).body.active).toBe(false);
    return { scim, id, user };
  }

  it("a PUT of profile attributes that leaves out active keeps the user inactive", async () => {
    const { scim, id, user } = await inactive();
    const { active: _, ...profile } = user;
    const put = await scim("PUT", `/Users/${id}`, { ...profile, title: "Engineer" });
    expect(put.status).toBe(200);
    expect(put.body.active, "reactivated by a PUT that never said active: true").toBe(false);
  });

  it("remove of active (or replace with null) does not reactivate", async () => {
    const { scim, id } = await inactive();
    const removed = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "remove", path: "active" }],
    });
    expect([removed.status, removed.body.active]).not.toEqual([200, true]);
  });
});

describe("one request's work is bounded", () => {
  afterEach(() => vi.restoreAllMocks());

  it("adding n emails to a user with n emails costs O(n) comparisons, not O(n^2)", async () => {
    const { scim } = setup();
    const n = 1000;
    const emails = (prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ value: `${prefix}${i}@x.io` }));
    const id = (await scim("POST", "/Users", { userName: "big", emails: emails("a") })).body.id;
    const stringify = vi.spyOn(JSON, "stringify");
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "add", path: "emails", value: emails("b") }],
    });
    const calls = stringify.mock.calls.length;
    stringify.mockRestore();
    // 4,000,000 calls here (n * n), each over a whole value: a 350 KB PATCH of 15,000 emails
    // held the event loop for ~2 minutes (and 1,000 operations of 10 emails, 280 KB, ~1 minute).
    expect([200, 400, 413]).toContain(patched.status);
    expect(calls, "JSON.stringify calls for one PATCH").toBeLessThan(20 * n);
  });

  it("the same values added twice in one operation are added once", async () => {
    const { scim } = setup();
    const id = (await scim("POST", "/Users", { userName: "dup" })).body.id;
    const value = { value: "c@x.io", type: "other" };
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "add", path: "emails", value: [value, value] }],
    });
    expect(patched.body.emails).toHaveLength(1);
  });
});

describe("emails: removing a sub-attribute keeps the rest of the value", () => {
  it("remove emails[primary eq true].value keeps that email's type", async () => {
    const { scim } = setup();
    const id = (
      await scim("POST", "/Users", {
        userName: "em",
        emails: [{ value: "w@x.io", type: "work", primary: true, display: "Work" }],
      })
    ).body.id;
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "remove", path: "emails[primary eq true].value" }],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.emails, "the value without its `value`, as §3.5.2.2 says").toEqual([
      { type: "work", primary: true, display: "Work" },
    ]);
  });
});

describe("follow-ups of the attack (issue 42)", () => {
  it("a password an older version stored in extra.scim is never served nor filtered on", async () => {
    const { store, scim } = setup();
    const id = (await scim("POST", "/Users", { userName: "old" })).body.id as string;
    const stored = await store.get(id);
    const kept = (stored?.extra?.scim ?? {}) as Record<string, unknown>;
    await store.replace({
      ...(stored as NonNullable<typeof stored>),
      extra: { scim: { ...kept, password: "S3cret-old!" } },
    });
    expect(JSON.stringify((await scim("GET", `/Users/${id}`)).body)).not.toContain("S3cret");
    expect(JSON.stringify((await scim("GET", "/Users")).body)).not.toContain("S3cret");
    const oracle = await scim("GET", `/Users?filter=${encodeURIComponent("password pr")}`);
    expect(oracle.body.totalResults).toBe(0);
    // The next write leaves it out of the store too.
    await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "title", value: "t" }],
    });
    expect(JSON.stringify(await store.get(id))).not.toContain("S3cret");
  });

  it("replace active null keeps an inactive user inactive; active true reactivates", async () => {
    const { scim } = setup();
    const id = (await scim("POST", "/Users", { userName: "ina", active: false })).body.id;
    const nulled = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "active", value: null }],
    });
    expect([nulled.status, nulled.body.active]).toEqual([200, false]);
    const put = await scim("PUT", `/Users/${id}`, { userName: "ina", active: true });
    expect(put.body.active).toBe(true);
    const kept = await scim("PUT", `/Users/${id}`, { userName: "ina", title: "t" });
    expect(kept.body.active, "an active user stays active without active").toBe(true);
  });

  it("a multi-valued attribute holds at most 1,000 values: more answers 400 invalidValue", async () => {
    const { scim } = setup();
    const emails = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `e${i}@x.io` }));
    const refused = await scim("POST", "/Users", { userName: "many", emails: emails(1001) });
    expect([refused.status, refused.body.scimType]).toEqual([400, "invalidValue"]);
    const id = (await scim("POST", "/Users", { userName: "many", emails: emails(1000) })).body.id;
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "add", path: "emails", value: [{ value: "one-more@x.io" }] }],
    });
    expect([patched.status, patched.body.scimType]).toEqual([400, "invalidValue"]);
    expect((await scim("GET", `/Users/${id}`)).body.emails).toHaveLength(1000);
  });

  it("a user over 512 KiB of JSON answers 400 invalidValue, by POST and by PATCHes", async () => {
    const { scim } = setup();
    const big = "x".repeat(300 * 1024);
    const refused = await scim("POST", "/Users", { userName: "big", title: big, nickName: big });
    expect([refused.status, refused.body.scimType]).toEqual([400, "invalidValue"]);
    const id = (await scim("POST", "/Users", { userName: "big", title: big })).body.id;
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "add", path: "nickName", value: big }],
    });
    expect([patched.status, patched.body.scimType]).toEqual([400, "invalidValue"]);
  });

  it.each([
    ["U+0000", "a\u0000b"],
    ["a lone surrogate", "a\ud800b"],
  ])("%s in a PATCH value answers 400 invalidValue", async (_name, value) => {
    const { scim } = setup();
    const id = (await scim("POST", "/Users", { userName: "nul" })).body.id;
    const patched = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "add", value: { title: value } }],
    });
    expect([patched.status, patched.body.scimType]).toEqual([400, "invalidValue"]);
  });
});
