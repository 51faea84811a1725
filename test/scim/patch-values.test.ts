// What a PATCH operation's value does to the values already there: an add never removes, a
// remove with a value list removes those values only, the value a PATCH makes primary wins, and
// one request's work is bounded (src/scim/patch-values.ts, applied by src/scim/patch.ts).
import { describe, expect, it } from "vitest";
import { ScimError } from "../../src/scim/errors.ts";
import { parseFilter } from "../../src/scim/filter.ts";
import { applyPatch, readPatchBody } from "../../src/scim/patch.ts";
import { maxPatchWork, termsOf } from "../../src/scim/patch-values.ts";

const patchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const base = () => ({
  userName: "bjensen",
  title: "Boss",
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "b@home.example", type: "home" },
    { value: "b@work.example", type: "work", primary: true },
  ],
  roles: [{ value: "admin" }, { value: "user", display: "User" }],
});

const apply = (resource: Record<string, unknown>, ...Operations: unknown[]) =>
  applyPatch(resource, readPatchBody({ schemas: [patchOp], Operations }));

function refusal(read: () => unknown): ScimError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    return error as ScimError;
  }
  throw new Error("expected a ScimError");
}

describe("an add never removes", () => {
  it.each([
    ["[] to emails", { op: "add", path: "emails", value: [] }],
    ["[{}] to emails", { op: "add", path: "emails", value: [{}] }],
    ["{} to name", { op: "add", path: "name", value: {} }],
    ["null to title", { op: "add", path: "title", value: null }],
    ["null to name.givenName", { op: "add", path: "name.givenName", value: null }],
    ["null to emails.type", { op: "add", path: "emails.type", value: null }],
    ["null to a value path", { op: "add", path: 'emails[type eq "home"].value', value: null }],
    ["null to a new value path", { op: "add", path: 'emails[type eq "fax"].value', value: null }],
    ["{givenName: null} to name", { op: "add", path: "name", value: { givenName: null } }],
    ["{name: {}} without path", { op: "add", value: { name: {}, emails: [] } }],
  ])("%s changes nothing", (_label, operation) => {
    expect(apply(base(), operation)).toEqual(base());
  });

  it("nor does a replace of a value that holds nothing once its prototype keys are dropped", () => {
    const operation = JSON.parse(
      '{"op":"replace","path":"name","value":{"__proto__":{"givenName":"x"}}}',
    );
    expect(apply(base(), operation)).toEqual(base());
    expect(apply(base(), { op: "replace", path: "name", value: {} })).toEqual(base());
  });

  it("a replace unassigns what it gives as null or [] (RFC 7643 §2.5), and only that", () => {
    const { name, emails, title } = apply(
      base(),
      { op: "replace", path: "name", value: { givenName: null, middleName: "J" } },
      { op: "replace", path: "emails", value: [] },
      { op: "replace", path: "title", value: null },
    );
    expect(name).toEqual({ familyName: "Jensen", middleName: "J" });
    expect([emails, title]).toEqual([undefined, undefined]);
    expect(apply(base(), { op: "replace", value: { name: null } }).name).toBeUndefined();
    expect(
      apply(base(), { op: "replace", path: "name", value: { givenName: null, familyName: null } })
        .name,
    ).toBeUndefined();
  });

  it.each([["add"], ["Replace"]])(
    "%s without a value answers 400 invalidValue (RFC 7644 §3.5.2.1, .3)",
    (op) => {
      expect(refusal(() => apply(base(), { op, path: "title" })).scimType).toBe("invalidValue");
    },
  );
});

describe("remove with a value list (Entra's form)", () => {
  it("removes the values listed, by their given sub-attributes, and keeps the others", () => {
    const result = apply(
      base(),
      { op: "Remove", path: "roles", value: [{ value: "ADMIN" }] },
      { op: "remove", path: "emails", value: [{ value: "b@home.example", type: "home" }] },
    );
    expect(result.roles).toEqual([{ value: "user", display: "User" }]);
    expect(result.emails).toEqual([{ value: "b@work.example", type: "work", primary: true }]);
  });

  it("names a value only by all its given sub-attributes; a bare string is the value", () => {
    const result = apply(
      base(),
      { op: "remove", path: "roles", value: [{ value: "user", display: "Other" }] },
      { op: "remove", path: "emails", value: "b@home.example" },
    );
    expect(result.roles).toEqual(base().roles);
    expect(result.emails).toEqual([{ value: "b@work.example", type: "work", primary: true }]);
  });

  it("removes nothing for an empty list or values that hold nothing; the last value removed unassigns", () => {
    expect(apply(base(), { op: "remove", path: "roles", value: [] }).roles).toEqual(base().roles);
    expect(apply(base(), { op: "remove", path: "roles", value: [{}] }).roles).toEqual(base().roles);
    const none = apply(base(), {
      op: "remove",
      path: "roles",
      value: [{ value: "admin" }, { value: "user" }],
    });
    expect(none.roles).toBeUndefined();
    // An extension's list: values compared as JSON; an empty object names no value.
    const ext = "urn:acme:scim:1.0:User";
    const tagged = { userName: "a", [ext]: { tags: [{ k: 1 }, { k: 2 }, "x"] } };
    expect(apply(tagged, { op: "remove", path: `${ext}:tags`, value: [{}] })).toEqual(tagged);
    expect(apply(tagged, { op: "remove", path: `${ext}:tags`, value: [{ k: 2 }, "x"] })).toEqual({
      userName: "a",
      [ext]: { tags: [{ k: 1 }] },
    });
    // Without a value, the whole attribute, as before.
    expect(apply(base(), { op: "remove", path: "roles" }).roles).toBeUndefined();
  });
});

describe("the value a PATCH makes primary wins (RFC 7644 §3.5.2)", () => {
  const primaries = (result: Record<string, unknown>) =>
    (result.emails as { value: string; primary?: boolean }[])
      .filter((email) => email.primary)
      .map((email) => email.value);

  it("through a value path's sub-attribute, before the old primary in the list", () => {
    const result = apply(base(), {
      op: "replace",
      path: 'emails[type eq "home"].primary',
      value: "True",
    });
    expect(primaries(result)).toEqual(["b@home.example"]);
  });

  it("through a value path's whole value, added or replaced", () => {
    for (const op of ["add", "replace"]) {
      const result = apply(base(), {
        op,
        path: 'emails[type eq "home"]',
        value: { value: "new@home.example", type: "home", primary: true },
      });
      expect(primaries(result)).toEqual(["new@home.example"]);
    }
  });

  it("an operation that makes no value primary keeps the one there", () => {
    const result = apply(base(), {
      op: "replace",
      path: 'emails[type eq "home"].value',
      value: "x@home.example",
    });
    expect(primaries(result)).toEqual(["b@work.example"]);
  });
});

describe("one request's work is bounded", () => {
  const emails = Array.from({ length: 1000 }, (_, i) => ({ value: `u${i}@x.io`, type: `t${i}` }));
  const terms = (n: number) =>
    Array.from({ length: n }, (_, i) => `value eq "zz${i}"`).join(" or ");

  it("counts a filter's terms", () => {
    expect(termsOf(parseFilter('type eq "work"'))).toBe(1);
    expect(termsOf(parseFilter('a eq "1" and not (b eq "2" or c pr)'))).toBe(3);
    expect(termsOf(parseFilter('emails[type eq "work" and value co "@"]'))).toBe(3);
  });

  it("answers 400 tooMany for operations x values x terms beyond the budget, before the work", () => {
    const perOperation = emails.length * 20;
    const operations = Math.floor(maxPatchWork / perOperation) + 1;
    const error = refusal(() =>
      apply(
        { userName: "a", emails },
        ...Array.from({ length: operations }, () => ({
          op: "remove",
          path: `emails[${terms(20)}].display`,
        })),
      ),
    );
    expect([error.status, error.scimType]).toEqual([400, "tooMany"]);
  });

  it("lets an identity provider's PATCH through, also on a user with 1,000 emails", () => {
    const result = apply(
      { userName: "a", emails },
      ...Array.from({ length: 40 }, (_, i) => ({
        op: "Replace",
        path: `emails[type eq "t${i}"].display`,
        value: "d",
      })),
    );
    expect((result.emails as { display?: string }[])[39]?.display).toBe("d");
  });

  it("a remove's value list costs the values held plus those listed, not their product", () => {
    // 1,000 held x 300 listed was 300,000 units: Entra's remove of 300 entitlements was refused.
    const listed = Array.from({ length: maxPatchWork / emails.length + 1 }, (_, i) => ({
      value: `U${i}@X.IO`,
    }));
    const result = apply(
      { userName: "a", emails },
      { op: "remove", path: "emails", value: listed },
    );
    expect((result.emails as unknown[]).length).toBe(emails.length - listed.length);
  });

  it("counts a remove's values held once per set of sub-attributes its list names", () => {
    // Each listed value naming other sub-attributes is its own look-up over every value held.
    const error = refusal(() =>
      apply(
        { userName: "a", emails },
        {
          op: "remove",
          path: "emails",
          value: Array.from({ length: maxPatchWork / emails.length + 1 }, (_, i) => ({
            value: "nobody",
            [`k${i}`]: "x",
          })),
        },
      ),
    );
    expect(error.scimType).toBe("tooMany");
  });
});
