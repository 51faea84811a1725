// Attack 2: an `authenticate` that answers something other than a boolean, and the fake identity
// provider (the testing kit) against a SCIM service that does not filter.
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { createScimIdentityProvider } from "../../../src/testing/index.ts";
import { clientOf } from "../attack/support.ts";

describe("authenticate answering a value that is not true", () => {
  // The handler tests `if (!allowed)`: any truthy value opens the server. A JavaScript check that
  // returns the string "false" (a header or environment value passed through), an object (a
  // `{ valid: false }` verdict) or an array lets every request in. Nothing an attacker can set is
  // trusted: only `true` should allow.
  it.each([["false"], ["no"], [{ valid: false }], [[]]])(
    "authenticate returning %j answers 401",
    async (verdict) => {
      const handler = createScimHandler({
        store: new MemoryUserStore(),
        authenticate: (() => verdict) as unknown as () => boolean,
      });
      const scim = clientOf(handler);
      expect(
        (await scim("GET", "/Users", undefined, { authorization: "Bearer anything" })).status,
      ).toBe(401);
      expect((await scim("POST", "/Users", { userName: "intruder" })).status).toBe(401);
    },
  );
});

describe("a token anyone can guess", () => {
  // An empty token is refused at construction, but a one-character one is taken: with no rate
  // limit on 401s, "a" (or a default such as "changeme") is found in a few requests. A SCIM
  // token is the only thing between the internet and user provisioning: a minimum length (and
  // docs saying how to make one, e.g. `openssl rand -hex 32`) belongs at construction.
  it.each([["a"], ["1234"], ["secret"]])("token %j throws a TypeError at construction", (weak) => {
    expect(() => createScimHandler({ store: new MemoryUserStore(), token: weak })).toThrow(
      TypeError,
    );
  });
});

describe("createScimIdentityProvider against a service that ignores the filter", () => {
  // The fake IdP takes Resources[0] of `filter=externalId eq "<uuid>"` as the user, without
  // checking its externalId. A service that ignores filters (the bug a checker exists to find)
  // answers with its first user: the simulator then deactivates, deletes or overwrites that
  // unrelated user, and reports success.
  function ignoringService() {
    const calls: string[] = [];
    const victim = {
      id: "victim-id",
      externalId: "someone-else",
      userName: "victim",
      active: true,
    };
    const fetch = async (request: Request) => {
      const url = new URL(request.url);
      calls.push(`${request.method} ${url.pathname}`);
      if (request.method === "GET" && url.pathname.endsWith("/Users")) {
        return Response.json(
          {
            schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
            totalResults: 1,
            startIndex: 1,
            itemsPerPage: 1,
            Resources: [victim],
          },
          { headers: { "content-type": "application/scim+json" } },
        );
      }
      if (request.method === "POST") {
        return Response.json({ ...victim, id: "new-id" }, { status: 201 });
      }
      if (request.method === "DELETE") return new Response(null, { status: 204 });
      return Response.json(victim, { status: 200 });
    };
    return { target: { fetch, basePath: "/scim/v2" }, calls };
  }

  it.each([["deactivate"], ["delete"]] as const)(
    "a directory delete (onRemove %s) never writes a user whose externalId is not the uuid",
    async (onRemove) => {
      const { target, calls } = ignoringService();
      const idp = createScimIdentityProvider({ target, token: "t", onRemove });
      await idp.fetch(new Request("http://idp/v1/user/u-1", { method: "DELETE" }));
      expect(calls.filter((call) => call.includes("victim-id"))).toEqual([]);
    },
  );

  it("a directory create of a new user is POSTed, not written over another user", async () => {
    const { target, calls } = ignoringService();
    const idp = createScimIdentityProvider({ target, token: "t" });
    await idp.fetch(
      new Request("http://idp/v1/user/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uuid: "u-2", username: "newbie", email: "n@example.com" }),
      }),
    );
    expect(calls.filter((call) => call.includes("victim-id"))).toEqual([]);
    expect(calls).toContain("POST /scim/v2/Users");
  });

  it("readUser does not read another user as the directory user", async () => {
    const { target } = ignoringService();
    const idp = createScimIdentityProvider({ target, token: "t" });
    expect(await idp.readUser("u-3")).toBeUndefined();
  });
});
