// What a body may hold (src/scim/resource.ts): numbers JSON can carry, a non-empty userName.
import { describe, expect, it } from "vitest";
import { patchOp, scim, setup } from "./helpers.ts";

const base = "/scim/v2";
const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

describe("a number beyond JSON's (1e400 reads as Infinity)", () => {
  it.each([
    ["a string attribute", '{"userName":"n","title":1e400}'],
    ["the enterprise extension", `{"userName":"n","${enterprise}":{"costCenter":-1e400}}`],
    ["another extension, nested", '{"userName":"n","urn:acme:ext":{"a":[{"b":1e400}]}}'],
    ["an attribute outside the schemas", '{"userName":"n","extra":1e999}'],
  ])("in %s answers 400 invalidValue on POST", async (_label, body) => {
    const { handler } = setup();
    const answer = await scim(handler, "POST", `${base}/Users`, body);
    expect([answer.status, answer.body.scimType]).toEqual([400, "invalidValue"]);
  });

  it("in a PATCH value answers 400 and changes nothing", async () => {
    const { handler } = setup();
    const id = (await scim(handler, "POST", `${base}/Users`, { userName: "n", title: "t" })).body
      .id;
    const answer = await scim(
      handler,
      "PATCH",
      `${base}/Users/${id}`,
      `{"schemas":["${patchOp}"],"Operations":[{"op":"replace","path":"title","value":1e400}]}`,
    );
    expect([answer.status, answer.body.scimType]).toEqual([400, "invalidValue"]);
    expect((await scim(handler, "GET", `${base}/Users/${id}`)).body.title).toBe("t");
  });
});

describe("userName empty or white space (RFC 7643 §4.1.1)", () => {
  it("answers 400 invalidValue on PUT and on a PATCH without path, and keeps the user's", async () => {
    const { handler, store } = setup();
    const id = (await scim(handler, "POST", `${base}/Users`, { userName: "kept" })).body.id;
    const put = await scim(handler, "PUT", `${base}/Users/${id}`, { userName: "\t " });
    const patched = await scim(handler, "PATCH", `${base}/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "replace", value: { userName: "" } }],
    });
    expect([put.status, put.body.scimType, patched.status, patched.body.scimType]).toEqual([
      400,
      "invalidValue",
      400,
      "invalidValue",
    ]);
    expect((await store.get(id))?.username).toBe("kept");
  });
});
