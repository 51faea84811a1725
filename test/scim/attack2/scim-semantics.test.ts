// Attack 2: what the RFCs say of userName, filters on booleans and dates, /.search, numbers, and
// a user the Provisioning API wrote on the same store, checked against what the server does.
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { bothProtocols, patchOp } from "../attack/support.ts";
import { entraUser } from "../helpers.ts";

function setup() {
  const store = new MemoryUserStore({ unique: ["username"] });
  return { store, ...bothProtocols(store) };
}

const filter = (text: string) => `/Users?filter=${encodeURIComponent(text)}`;

describe("both protocols: a directory user without a username", () => {
  // The Provisioning API accepts a user without username (201); SCIM lists it (GET /Users, what
  // Okta's import reads) without the REQUIRED userName (RFC 7643 §4.1.1), and refuses every PATCH
  // of it (Entra disabling it: 400 mutability "userName is required"): a 4xx to what an identity
  // provider legitimately sends, which it retries for ever or quarantines on.
  it("a PATCH of active on a listed user is not refused with a 4xx", async () => {
    const { scim, platform } = setup();
    expect(
      (await platform("/v1/user/create", { uuid: "p-2", email: "p2@example.com" })).status,
    ).toBe(201);
    const listed = (await scim("GET", "/Users")).body.Resources as { id: string }[];
    if (!listed.some((user) => user.id === "p-2")) return; // not served as a SCIM user: fine
    const answer = await scim("PATCH", "/Users/p-2", {
      schemas: [patchOp],
      Operations: [{ op: "Replace", path: "active", value: "False" }],
    });
    expect(answer.status).toBe(200);
    expect((await scim("GET", "/Users/p-2")).body.active).toBe(false);
  });

  it("every listed user has its REQUIRED userName", async () => {
    const { scim, platform } = setup();
    expect(
      (await platform("/v1/user/create", { uuid: "p-3", email: "p3@example.com" })).status,
    ).toBe(201);
    const listed = (await scim("GET", "/Users")).body.Resources as { userName?: unknown }[];
    for (const user of listed) expect(typeof user.userName).toBe("string");
  });
});

describe("userName is required and non-empty (RFC 7643 §4.1.1)", () => {
  // "Each User MUST include a non-empty userName value."
  it.each([[""], ["   "]])("POST with userName %j answers 400 invalidValue", async (userName) => {
    const { scim } = setup();
    const answer = await scim("POST", "/Users", { userName });
    expect(answer.status).toBe(400);
    expect(answer.body.scimType).toBe("invalidValue");
  });

  it('PATCH replace userName "" answers 400 and keeps the userName', async () => {
    const { scim, store } = setup();
    const id = (await scim("POST", "/Users", entraUser("kept"))).body.id;
    const answer = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", path: "userName", value: "" }],
    });
    expect(answer.status).toBe(400);
    expect((await store.get(id))?.username).toBe("kept");
  });
});

describe("filters on booleans and dates (RFC 7644 §3.4.2.2)", () => {
  // gt/ge/lt/le: "Boolean and Binary attributes SHALL cause a failed response (HTTP status code
  // 400) with scimType of invalidFilter"; the server answers 200 and an empty list.
  it.each([["active gt false"], ["active le true"]])(
    "%s answers 400 invalidFilter",
    async (text) => {
      const { scim } = setup();
      await scim("POST", "/Users", entraUser("b1"));
      const answer = await scim("GET", filter(text));
      expect(answer.status).toBe(400);
      expect(answer.body.scimType).toBe("invalidFilter");
    },
  );

  // gt on a dateTime: "the attribute value SHALL be chronologically after": compared as text,
  // a date written with an offset (RFC 3339 allows it, xsd:dateTime too) compares wrong.
  it("meta.lastModified gt a date with an offset compares chronologically", async () => {
    const { scim } = setup();
    await scim("POST", "/Users", entraUser("d1"));
    // One hour before now, written in UTC+10.
    const earlier = new Date(Date.now() - 3600_000 + 10 * 3600_000)
      .toISOString()
      .replace("Z", "+10:00");
    const answer = await scim("GET", filter(`meta.lastModified gt "${earlier}"`));
    expect(answer.status).toBe(200);
    expect(answer.body.totalResults).toBe(1);
  });
});

describe("POST /.search at the root (RFC 7644 §3.4.3)", () => {
  // /Users/.search answers 501 (not supported); the same request at the root answers 404 "No such
  // endpoint", which reads as a wrong base URL.
  it("answers 501 as /Users/.search does", async () => {
    const { scim } = setup();
    const body = { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"] };
    expect((await scim("POST", "/Users/.search", body)).status).toBe(501);
    expect((await scim("POST", "/.search", body)).status).toBe(501);
  });
});

describe("numbers no JSON answer can carry", () => {
  // 1e400 parses to Infinity, is stored, and is served (and stored in SQL as JSON) as null: a 201
  // for a value that was changed silently. Values no store keeps answer 400 invalidValue.
  it("an extension value of 1e400 is refused, not turned into null", async () => {
    const { scim } = setup();
    const answer = await scim("POST", "/Users", '{"userName":"num","urn:acme:ext":{"n":1e400}}');
    // No JSON answer can carry Infinity: the only faithful answer is a refusal.
    expect(answer.status).toBe(400);
    expect(answer.body.scimType).toBe("invalidValue");
  });
});
