// Attack 2: PATCH values the first attack did not try. A PATCH answered 200 must have stored
// what it said (GUIDE: never 2xx for a change not durably stored), and an `add` never removes.
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, patchOp, token } from "../attack/support.ts";
import { entraUser } from "../helpers.ts";

function setup() {
  const store = new MemoryUserStore();
  const scim = clientOf(createScimHandler({ store, token }));
  return { store, scim };
}

const patch = (...Operations: unknown[]) => ({ schemas: [patchOp], Operations });

describe("primary: true set by PATCH on another value (RFC 7644 §3.5.2)", () => {
  // RFC 7644 §3.5.2: "a PATCH operation that sets a value's 'primary' sub-attribute to 'true'
  // SHALL cause the server to automatically set 'primary' to 'false' for any other values".
  // The server's onePrimary keeps the LAST value with primary true, which is the old primary
  // whenever the new one comes earlier in the list: the change answers 200 and is dropped.
  it('replace emails[type eq "work"].primary true makes the work email the primary one', async () => {
    const { store, scim } = setup();
    const created = await scim("POST", "/Users", {
      userName: "prim",
      emails: [
        { value: "w@example.com", type: "work" },
        { value: "h@example.com", type: "home", primary: true },
      ],
    });
    const id = created.body.id;
    const answer = await scim(
      "PATCH",
      `/Users/${id}`,
      patch({ op: "replace", path: 'emails[type eq "work"].primary', value: true }),
    );
    expect(answer.status).toBe(200);
    const read = await scim("GET", `/Users/${id}`);
    const primaries = read.body.emails.filter((email: { primary?: boolean }) => email.primary);
    expect(primaries.map((email: { value: string }) => email.value)).toEqual(["w@example.com"]);
    // The store's email is the primary one: the application sees the change too.
    expect((await store.get(id))?.email).toBe("w@example.com");
  });

  it("Entra's replace of the whole emails list with a new primary first keeps that primary", async () => {
    const { scim } = setup();
    const id = (await scim("POST", "/Users", entraUser("prim2"))).body.id;
    await scim(
      "PATCH",
      `/Users/${id}`,
      patch({ op: "add", path: "emails", value: [{ value: "other@example.com", type: "other" }] }),
    );
    // Now make "other" the primary by a value-path replace of its sub-attribute.
    await scim(
      "PATCH",
      `/Users/${id}`,
      patch({ op: "Replace", path: 'emails[type eq "other"].primary', value: "True" }),
    );
    const read = await scim("GET", `/Users/${id}`);
    const primary = read.body.emails.find((email: { primary?: boolean }) => email.primary);
    expect(primary?.value).toBe("other@example.com");
  });
});

describe("an add never removes (RFC 7644 §3.5.2.1)", () => {
  // `add` of an empty list to a multi-valued attribute, or of an empty object (or one whose only
  // keys are dropped prototype keys) to a complex one, adds nothing; the server instead removes
  // the attribute, and with emails the store's email: a 200 that lost data.
  const cases: [string, unknown, string][] = [
    ["add path emails []", { op: "add", path: "emails", value: [] }, "emails"],
    ["add no path {emails: []}", { op: "add", value: { emails: [] } }, "emails"],
    ["add path name {}", { op: "add", path: "name", value: {} }, "name"],
    ["add no path {name: {}}", { op: "add", value: { name: {} } }, "name"],
    [
      "replace path name {} (given sub-attributes replaced, the others kept)",
      { op: "replace", path: "name", value: {} },
      "name",
    ],
  ];
  it.each(cases)("%s keeps the attribute", async (_label, operation, attribute) => {
    const { store, scim } = setup();
    const id = (await scim("POST", "/Users", entraUser("keep"))).body.id;
    const before = (await scim("GET", `/Users/${id}`)).body[attribute];
    expect(before).toBeDefined();
    const answer = await scim("PATCH", `/Users/${id}`, patch(operation));
    // Either refused (400 invalidValue) or a no-op: never a 200 that removed it.
    if (answer.status === 200) {
      expect((await scim("GET", `/Users/${id}`)).body[attribute]).toEqual(before);
      if (attribute === "emails") expect((await store.get(id))?.email).toBe("keep@example.com");
      if (attribute === "name") expect((await store.get(id))?.firstName).toBe("Ryan");
    } else {
      expect(answer.status).toBe(400);
    }
  });

  it("an add whose value holds only a prototype key leaves the attribute as it was", async () => {
    const { scim } = setup();
    const id = (await scim("POST", "/Users", entraUser("proto"))).body.id;
    const answer = await scim(
      "PATCH",
      `/Users/${id}`,
      `{"schemas":["${patchOp}"],"Operations":[{"op":"add","value":{"name":{"__proto__":{"givenName":"x"}}}}]}`,
    );
    expect([200, 400]).toContain(answer.status);
    expect((await scim("GET", `/Users/${id}`)).body.name).toEqual({
      formatted: "Ryan Leenay",
      familyName: "Leenay",
      givenName: "Ryan",
    });
    expect(({} as { givenName?: unknown }).givenName).toBeUndefined();
  });
});
