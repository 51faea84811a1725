import { describe, expect, it } from "vitest";
import { ScimError } from "../../src/scim/errors.ts";
import { matches } from "../../src/scim/evaluate.ts";
import { maxFilterDepth, parseFilter, parsePatchPath } from "../../src/scim/filter.ts";

const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const user = {
  id: "2819c223",
  userName: "Bjensen@Example.com",
  externalId: "Ext-1",
  active: true,
  name: { givenName: "Barbara", familyName: "Jensen" },
  emails: [
    { value: "bjensen@example.com", type: "work", primary: true },
    { value: "babs@jensen.org", type: "home" },
  ],
  meta: { lastModified: "2011-05-13T04:42:34Z" },
  [enterprise]: { employeeNumber: "701984", manager: { value: "boss" } },
};

const hit = (filter: string) => matches(parseFilter(filter), user);

function refused(read: () => unknown, scimType: string): void {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ScimError);
    expect((error as ScimError).status).toBe(400);
    expect((error as ScimError).scimType).toBe(scimType);
    return;
  }
  throw new Error("expected a ScimError");
}

describe("filters (RFC 7644 §3.4.2.2)", () => {
  it("compares per caseExact: userName without case, externalId and id exactly", () => {
    expect(hit('userName eq "bjensen@example.com"')).toBe(true);
    expect(hit('USERNAME EQ "BJENSEN@EXAMPLE.COM"')).toBe(true);
    expect(hit('externalId eq "Ext-1"')).toBe(true);
    expect(hit('externalId eq "ext-1"')).toBe(false);
    expect(hit('id eq "2819C223"')).toBe(false);
  });

  it("has every operator", () => {
    expect(hit('userName ne "x"')).toBe(true);
    expect(hit('userName ne "bjensen@example.com"')).toBe(false);
    expect(hit('userName co "jensen"')).toBe(true);
    expect(hit('userName sw "bj"')).toBe(true);
    expect(hit('userName sw "jensen"')).toBe(false);
    expect(hit('userName ew ".com"')).toBe(true);
    expect(hit('meta.lastModified gt "2011-05-13T04:42:34Z"')).toBe(false);
    expect(hit('meta.lastModified ge "2011-05-13T04:42:34Z"')).toBe(true);
    expect(hit('meta.lastModified lt "2012-01-01T00:00:00Z"')).toBe(true);
    expect(hit('meta.lastModified le "2011-01-01T00:00:00Z"')).toBe(false);
    expect(hit("title pr")).toBe(false);
    expect(hit("name.givenName pr")).toBe(true);
    expect(hit("active eq true")).toBe(true);
    expect(hit("active eq false")).toBe(false);
    expect(hit("title eq null")).toBe(true);
  });

  it("gives not over and over or, and honours grouping", () => {
    expect(hit('userName eq "x" or userName eq "bjensen@example.com" and active eq false')).toBe(
      false,
    );
    expect(hit('(userName eq "x" or userName eq "bjensen@example.com") and active eq true')).toBe(
      true,
    );
    expect(hit('userName eq "bjensen@example.com" or userName eq "x" and active eq false')).toBe(
      true,
    );
    expect(hit('not (userName eq "x")')).toBe(true);
    expect(hit('not(active eq true) or externalId eq "Ext-1"')).toBe(true);
  });

  it("matches multi-valued attributes by any value, with value filters", () => {
    expect(hit('emails eq "babs@jensen.org"')).toBe(true);
    expect(hit('emails.value eq "babs@jensen.org"')).toBe(true);
    expect(hit('emails[type eq "work" and value co "@example.com"]')).toBe(true);
    expect(hit('emails[type eq "home" and value co "@example.com"]')).toBe(false);
    expect(hit('emails[type eq "work"].value eq "bjensen@example.com"')).toBe(true);
    expect(hit('emails[type eq "work"].value eq "babs@jensen.org"')).toBe(false);
  });

  it("reads URN-qualified attributes", () => {
    expect(hit(`${enterprise}:employeeNumber eq "701984"`)).toBe(true);
    expect(hit(`${enterprise}:manager.value eq "boss"`)).toBe(true);
    expect(
      hit(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bjensen@example.com"`),
    ).toBe(true);
  });

  it("reads JSON strings with escapes and numbers", () => {
    expect(matches(parseFilter('title eq "a\\"b"'), { title: 'a"b' })).toBe(true);
    expect(matches(parseFilter("count gt 1.5e1"), { count: 16 })).toBe(true);
  });

  it("refuses what is not the grammar with invalidFilter", () => {
    for (const filter of [
      "",
      "userName",
      'userName eq "a',
      'userName eq "a" and',
      'userName eq "a")',
      '(userName eq "a"',
      'userName eq "a" xor title eq "b"',
      'userName eq "\u0001"',
      "userName eq bare",
      'emails[type eq "work"',
      'a.b.c eq "x"',
      "userName € 1",
    ]) {
      refused(() => parseFilter(filter), "invalidFilter");
    }
  });

  it("refuses gt, ge, lt and le on a boolean or binary attribute, or with a boolean value", () => {
    // RFC 7644 §3.4.2.2: "Boolean and Binary attributes SHALL cause a failed response".
    for (const filter of [
      "active gt false",
      "ACTIVE Le true",
      'userName eq "x" or not (active lt true)',
      "emails[primary ge true]",
      'emails[type eq "work"].primary gt false',
      'x509Certificates gt "AAAA"',
      'x509Certificates[value lt "AAAA"]',
      "title gt true",
      "urn:ietf:params:scim:schemas:core:2.0:User:active gt false",
    ]) {
      refused(() => parseFilter(filter), "invalidFilter");
    }
    refused(() => parsePatchPath("emails[primary gt false].value"), "invalidFilter");
    // Ordering is fine on the other types, and eq/ne on booleans.
    for (const filter of [
      "active eq false",
      "active ne true",
      'title gt "a"',
      'emails[value ge "a"]',
      'urn:acme:ext:flag gt "x"',
      'meta.lastModified gt "2011-05-13T04:42:34Z"',
    ]) {
      expect(() => parseFilter(filter)).not.toThrow();
    }
  });

  it("compares dateTime attributes chronologically, whatever the offset", () => {
    // 04:42:34Z is 14:42:34+10:00 and 00:42:34-04:00: text comparison orders them wrong.
    expect(hit('meta.lastModified eq "2011-05-13T14:42:34+10:00"')).toBe(true);
    expect(hit('meta.lastModified gt "2011-05-13T14:42:33+10:00"')).toBe(true);
    expect(hit('meta.lastModified gt "2011-05-13T14:42:34+10:00"')).toBe(false);
    expect(hit('meta.lastModified lt "2011-05-13T00:42:35-04:00"')).toBe(true);
    expect(hit('meta.lastModified ge "2011-05-13T04:42:34.000Z"')).toBe(true);
    expect(hit('meta.lastModified ne "2011-05-13T04:42:34.000Z"')).toBe(false);
    // Text that is not a date compares as text, as before.
    expect(hit('meta.lastModified gt "2011"')).toBe(true);
    expect(hit('meta.lastModified sw "2011-05"')).toBe(true);
  });

  it("bounds nesting and length before recursing", () => {
    const deep = `${"(".repeat(maxFilterDepth + 1)}title pr${")".repeat(maxFilterDepth + 1)}`;
    refused(() => parseFilter(deep), "invalidFilter");
    const ok = `${"(".repeat(maxFilterDepth)}title pr${")".repeat(maxFilterDepth)}`;
    expect(() => parseFilter(ok)).not.toThrow();
    refused(() => parseFilter(`${"not (".repeat(10000)}`), "invalidFilter");
    refused(() => parseFilter(`title eq "${"a".repeat(5000)}"`), "invalidFilter");
  });
});

describe("PATCH paths (RFC 7644 §3.5.2)", () => {
  it("reads attribute paths, value paths and their sub-attribute", () => {
    expect(parsePatchPath("name.givenName")).toMatchObject({
      path: { attribute: "name", subAttribute: "givenName" },
      filter: undefined,
    });
    expect(parsePatchPath('emails[type eq "work"].value')).toMatchObject({
      path: { attribute: "emails" },
      filter: { op: "eq", value: "work" },
      subAttribute: "value",
    });
    expect(parsePatchPath(`${enterprise}:manager`)).toMatchObject({
      path: { schema: enterprise, attribute: "manager" },
    });
    expect(parsePatchPath('members[value eq "2819c223"]')).toMatchObject({
      subAttribute: undefined,
    });
  });

  it("refuses bad paths with invalidPath", () => {
    for (const path of [
      "",
      "a b",
      "name.given.name",
      'emails[type eq "work"',
      'emails[type eq "work"]value',
      'name.x[type eq "a"]',
    ]) {
      refused(() => parsePatchPath(path), "invalidPath");
    }
    refused(() => parsePatchPath('emails[type zz "work"]'), "invalidFilter");
  });
});
