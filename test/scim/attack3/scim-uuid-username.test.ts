// Attack 3: a user the Provisioning API wrote without a username is served with its uuid as
// userName (src/scim/mapping.ts). Then the served userName must behave as a userName everywhere:
// found by `userName eq` (Okta's and Entra's only look-up), and unique (RFC 7643 §4.1.1:
// uniqueness "server").
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { bothProtocols } from "../attack/support.ts";

function setup() {
  const store = new MemoryUserStore({});
  return { store, ...bothProtocols(store) };
}

const filter = (text: string) => `/Users?filter=${encodeURIComponent(text)}`;

describe("a user served with its uuid as userName", () => {
  it("is found by userName eq <the userName it is served with>", async () => {
    const { scim, platform } = setup();
    expect(
      (await platform("/v1/user/create", { uuid: "dir-1", email: "d1@example.com" })).status,
    ).toBe(201);
    const served = await scim("GET", "/Users/dir-1");
    expect(served.body.userName).toBe("dir-1");
    // Okta's and Entra's look-up: not found here means they POST a second user for it.
    const found = await scim("GET", filter('userName eq "dir-1"'));
    expect(found.body.totalResults).toBe(1);
  });

  it("the same filter gives the same answer whether or not the server can look it up by key", async () => {
    const { scim, platform } = setup();
    await platform("/v1/user/create", { uuid: "dir-2", email: "d2@example.com" });
    const looked = await scim("GET", filter('userName eq "dir-2"'));
    const evaluated = await scim("GET", filter('userName eq "dir-2" or userName eq "nobody"'));
    expect(looked.body.totalResults).toBe(evaluated.body.totalResults);
  });

  it("a POST of that userName answers 409 uniqueness, not a second user with it", async () => {
    const { scim, platform } = setup();
    await platform("/v1/user/create", { uuid: "dir-3", email: "d3@example.com" });
    const created = await scim("POST", "/Users", { userName: "DIR-3" });
    const all = (await scim("GET", filter('userName eq "dir-3" or userName eq "x"'))).body;
    expect(
      { status: created.status, holders: all.totalResults },
      JSON.stringify(created.body),
    ).toEqual({ status: 409, holders: 1 });
  });

  it("a rename of another user to that userName answers 409", async () => {
    const { scim, platform } = setup();
    await platform("/v1/user/create", { uuid: "dir-4", email: "d4@example.com" });
    const other = await scim("POST", "/Users", { userName: "someone" });
    const renamed = await scim("PATCH", `/Users/${other.body.id}`, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "userName", value: "dir-4" }],
    });
    expect(renamed.status).toBe(409);
  });
});
