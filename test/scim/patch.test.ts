import { describe, expect, it } from "vitest";
import { ScimError } from "../../src/scim/errors.ts";
import { applyPatch, maxPatchOperations, readPatchBody } from "../../src/scim/patch.ts";

const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = () => ({
  userName: "bjensen",
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "b@work.example", type: "work", primary: true },
    { value: "b@home.example", type: "home" },
  ],
  active: true,
});

const apply = (resource: Record<string, unknown>, ...Operations: unknown[]) =>
  applyPatch(resource, readPatchBody({ schemas: [patchOp], Operations }));

function refused(read: () => unknown, scimType: string): void {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    expect((error as ScimError).scimType).toBe(scimType);
    return;
  }
  throw new Error("expected a ScimError");
}

describe("the PatchOp body", () => {
  it("must name the schema, carry operations, each add, replace or remove in any case", () => {
    refused(() => readPatchBody({ Operations: [{ op: "add", value: {} }] }), "invalidSyntax");
    refused(() => readPatchBody({ schemas: [patchOp], Operations: [] }), "invalidSyntax");
    refused(
      () => readPatchBody({ schemas: [patchOp], Operations: [{ op: "copy" }] }),
      "invalidSyntax",
    );
    refused(() => readPatchBody([]), "invalidSyntax");
    const many = Array.from({ length: maxPatchOperations + 1 }, () => ({
      op: "add",
      path: "title",
      value: "x",
    }));
    refused(() => readPatchBody({ schemas: [patchOp], Operations: many }), "invalidSyntax");
    expect(
      readPatchBody({
        schemas: [patchOp],
        Operations: [{ op: "Replace", path: "title", value: "x" }],
      }),
    ).toEqual([{ op: "replace", path: "title", value: "x" }]);
  });
});

describe("add (§3.5.2.1)", () => {
  it("sets a single-valued attribute, appends to a multi-valued one, merges a complex one", () => {
    const result = apply(
      base(),
      { op: "add", path: "title", value: "Tour Guide" },
      { op: "add", path: "emails", value: [{ value: "c@other.example", type: "other" }] },
      { op: "add", path: "name", value: { middleName: "J" } },
    );
    expect(result.title).toBe("Tour Guide");
    expect(result.emails).toHaveLength(3);
    expect(result.name).toEqual({ givenName: "Barbara", familyName: "Jensen", middleName: "J" });
  });

  it("without path, takes an object of attributes, the extension's under its URN", () => {
    const result = apply(base(), {
      op: "add",
      value: { title: "x", [enterprise]: { department: "R&D" } },
    });
    expect(result).toMatchObject({ title: "x", [enterprise]: { department: "R&D" } });
  });

  it("creates a work email through a value path that matches nothing yet (Entra)", () => {
    const result = apply(
      { userName: "a" },
      { op: "Add", path: 'emails[type eq "work"].value', value: "a@x" },
    );
    expect(result.emails).toEqual([{ type: "work", value: "a@x" }]);
  });

  it("keeps one primary value", () => {
    const result = apply(base(), {
      op: "add",
      path: "emails",
      value: [{ value: "n@x", type: "other", primary: true }],
    });
    const primaries = (result.emails as { primary?: boolean }[]).filter((email) => email.primary);
    expect(primaries).toHaveLength(1);
  });
});

describe("replace (§3.5.2.3)", () => {
  it("replaces a multi-valued attribute whole, the matching values of a value path, a sub-attribute", () => {
    expect(
      apply(base(), { op: "replace", path: "emails", value: [{ value: "only@x" }] }).emails,
    ).toEqual([{ value: "only@x" }]);
    const one = apply(base(), {
      op: "replace",
      path: 'emails[type eq "home"].value',
      value: "new@home",
    });
    expect(one.emails).toEqual([
      { value: "b@work.example", type: "work", primary: true },
      { value: "new@home", type: "home" },
    ]);
    expect(apply(base(), { op: "replace", path: "name.familyName", value: "Doe" }).name).toEqual({
      givenName: "Barbara",
      familyName: "Doe",
    });
  });

  it("answers noTarget when a value path without sub-attribute matches nothing", () => {
    refused(
      () => apply(base(), { op: "replace", path: 'emails[type eq "fax"]', value: { value: "x" } }),
      "noTarget",
    );
  });

  it("reads string booleans and refuses other values for a boolean", () => {
    expect(apply(base(), { op: "replace", path: "active", value: "False" }).active).toBe(false);
    expect(apply(base(), { op: "replace", value: { active: "true" } }).active).toBe(true);
    refused(() => apply(base(), { op: "replace", path: "active", value: "nope" }), "invalidValue");
  });

  it("refuses read-only attributes and unknown ones", () => {
    refused(() => apply(base(), { op: "replace", path: "id", value: "other" }), "mutability");
    refused(() => apply(base(), { op: "replace", path: "meta", value: {} }), "mutability");
    refused(() => apply(base(), { op: "replace", path: "nickname.x", value: "a" }), "invalidPath");
    refused(
      () => apply(base(), { op: "replace", path: "unknownThing", value: "a" }),
      "invalidPath",
    );
  });
});

describe("remove (§3.5.2.2)", () => {
  it("removes an attribute, the matching values, a sub-attribute", () => {
    expect(apply(base(), { op: "remove", path: "name" }).name).toBeUndefined();
    expect(apply(base(), { op: "remove", path: 'emails[type eq "home"]' }).emails).toEqual([
      { value: "b@work.example", type: "work", primary: true },
    ]);
    expect(apply(base(), { op: "remove", path: "name.givenName" }).name).toEqual({
      familyName: "Jensen",
    });
    expect(apply(base(), { op: "remove", path: 'emails[type eq "fax"]' }).emails).toHaveLength(2);
  });

  it("needs a path", () => {
    refused(() => apply(base(), { op: "remove" }), "noTarget");
  });
});

describe("atomicity", () => {
  it("never changes the resource it is given", () => {
    const resource = base();
    const before = structuredClone(resource);
    apply(
      resource,
      { op: "replace", path: "name.givenName", value: "X" },
      { op: "add", path: "emails", value: [{ value: "y" }] },
    );
    expect(resource).toEqual(before);
  });
});
