// Attack 2: a PATCH removes exactly what it names. Entra sends removals of multi-valued values
// with a `value` list (shared/SCIM.md, "member removal with a value array"); an `add` without a
// value is no removal at all (RFC 7644 §3.5.2.1: the operation MUST contain a value).
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

describe("remove with a value list removes those values only", () => {
  // The server ignores `value` on a remove and removes the whole attribute: every role, every
  // email (and the store's email), answered 200. Either the listed values go and the rest stay,
  // or the request is refused (400): never more removed than named.
  it.each([
    ["roles", [{ value: "admin" }, { value: "user" }], [{ value: "admin" }], [{ value: "user" }]],
    [
      "emails",
      [
        { value: "a@example.com", type: "work", primary: true },
        { value: "b@example.com", type: "home" },
      ],
      [{ value: "b@example.com" }],
      [{ value: "a@example.com", type: "work", primary: true }],
    ],
  ])("Remove path %s with a value list", async (attribute, initial, removed, left) => {
    const { store, scim } = setup();
    const id = (await scim("POST", "/Users", { ...entraUser("rv"), [attribute]: initial })).body.id;
    const answer = await scim(
      "PATCH",
      `/Users/${id}`,
      patch({ op: "Remove", path: attribute, value: removed }),
    );
    if (answer.status === 200) {
      expect((await scim("GET", `/Users/${id}`)).body[attribute]).toEqual(left);
      if (attribute === "emails") expect((await store.get(id))?.email).toBe("a@example.com");
    } else {
      expect(answer.status).toBe(400);
      expect((await scim("GET", `/Users/${id}`)).body[attribute]).toEqual(initial);
    }
  });
});

describe("add and replace with a path but no value", () => {
  // `{"op":"add","path":"title"}` answers 200 and removes the title: an add that deletes.
  it.each([["add"], ["Add"]])(
    "%s path title without value does not remove the title",
    async (op) => {
      const { scim } = setup();
      const id = (await scim("POST", "/Users", { ...entraUser("nv"), title: "Boss" })).body.id;
      const answer = await scim("PATCH", `/Users/${id}`, patch({ op, path: "title" }));
      expect((await scim("GET", `/Users/${id}`)).body.title).toBe("Boss");
      expect(answer.status).toBe(400);
      expect(answer.body.scimType).toBe("invalidValue");
    },
  );
});
