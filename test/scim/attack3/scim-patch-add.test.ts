// Attack 3: "an add never removes" (A-series PATCH fix) dedupes added values by their JSON text,
// so the same value written with its sub-attributes in another order (or as Entra's string
// "True") is added a second time: the user then holds one work email twice, against Entra's
// "type unique within a multi-valued attribute", and RFC 7644 §3.5.2.1 (a value already there
// adds nothing).
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, patchOp, token } from "../attack/support.ts";

describe("PATCH add of a value the user already holds", () => {
  it.each([
    ["other key order", { primary: true, type: "work", value: "a@example.com" }],
    ["Entra's string boolean", { value: "a@example.com", type: "work", primary: "True" }],
  ])("%s: the email is held once", async (_label, email) => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore({}), token }));
    const created = await scim("POST", "/Users", {
      userName: "a",
      emails: [{ value: "a@example.com", type: "work", primary: true }],
    });
    const answer = await scim("PATCH", `/Users/${created.body.id}`, {
      schemas: [patchOp],
      Operations: [{ op: "Add", path: "emails", value: [email] }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.emails).toHaveLength(1);
  });
});
