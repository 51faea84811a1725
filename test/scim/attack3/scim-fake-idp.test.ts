// Attack 3: the fake identity provider's match (directoryUserIn) on a service that ignores the
// filter and lists every user: when that list passes the 64 KiB read it is cut off, and the
// IdP reads "no such user" where the user is held, then POSTs it again (a duplicate on a
// service without uniqueness). A cut-off answer is one nothing may be concluded from.
import { describe, expect, it } from "vitest";
import { createScimIdentityProvider } from "../../../src/testing/index.ts";
import { token } from "../attack/support.ts";

describe("the fake IdP on a service that ignores filters", () => {
  it("never POSTs a user the service lists, when the list was cut off at 64 KiB", async () => {
    const held = Array.from({ length: 200 }, (_, i) => ({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      id: `id-${i}`,
      externalId: i === 199 ? "dir-user" : `other-${i}`,
      userName: `user-${i}@example.com`,
      active: true,
      title: "x".repeat(400),
    }));
    let posts = 0;
    const service = {
      basePath: "",
      async fetch(request: Request): Promise<Response> {
        const url = new URL(request.url);
        if (request.method === "GET" && url.pathname.endsWith("/Users")) {
          // Ignores the filter: every user, in one page.
          return Response.json(
            {
              schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
              totalResults: held.length,
              startIndex: 1,
              itemsPerPage: held.length,
              Resources: held,
            },
            { headers: { "content-type": "application/scim+json" } },
          );
        }
        if (request.method === "POST") {
          posts++;
          return Response.json({ ...held[199], id: `dup-${posts}` }, { status: 201 });
        }
        return Response.json({}, { status: 200 });
      },
    };
    const idp = createScimIdentityProvider({ target: service, token });
    const answer = await idp.fetch(
      new Request("http://idp/v1/user/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uuid: "dir-user", username: "dir.user" }),
      }),
    );
    expect({ posts, status: answer.status }).toEqual({ posts: 0, status: expect.any(Number) });
  });
});
