import { describe, expect, it } from "vitest";
import {
  defaultMapping,
  directoryUuid,
  fromAttributes,
  type LdapEntry,
  objectGuidToString,
  objectSidToString,
} from "../../src/ldap/index.ts";
import {
  attributesToRequest,
  bufferAttributeNames,
  fromPortableMapping,
  mapEntry,
  type PortableMapping,
  toLdapEntry,
  toPortableMapping,
  uuidAttributes,
  uuidAttributesToRequest,
} from "../../src/ldap/mapping.ts";

import { recordedAdUser } from "../support/directory-fixture.ts";

const guid = (base64: string) => Buffer.from(base64, "base64");

describe("objectGuidToString", () => {
  // Pairs that PowerShell's [GUID] produced from AD's bytes, as published with their base64.
  it.each([
    ["BpazOkLGm0iEtljAONPvOQ==", "3ab39606-c642-489b-84b6-58c038d3ef39"],
    ["MsNKjF+XF0ete7pKTpaP/w==", "8c4ac332-975f-4717-ad7b-ba4a4e968fff"],
  ])("renders %s as %s (first three groups little-endian)", (base64, expected) => {
    expect(objectGuidToString(guid(base64))).toBe(expected);
  });

  it("refuses a value that is not 16 bytes", () => {
    expect(() => objectGuidToString(new Uint8Array(15))).toThrow("16 bytes, not 15");
  });
});

describe("objectSidToString", () => {
  it.each([
    // BUILTIN\Administrators, as Microsoft documents its binary form.
    ["AQIAAAAAAAUgAAAAIAIAAA==", "S-1-5-32-544"],
    // Everyone: authority 1, one sub-authority 0.
    ["AQEAAAAAAAEAAAAA", "S-1-1-0"],
  ])("renders %s as %s (sub-authorities little-endian)", (base64, expected) => {
    expect(objectSidToString(Buffer.from(base64, "base64"))).toBe(expected);
  });

  it("answers undefined for bytes that are not a SID", () => {
    expect(objectSidToString(new Uint8Array(7))).toBeUndefined();
    // Two sub-authorities announced, one present.
    expect(objectSidToString(Buffer.from("AQIAAAAAAAUgAAAA", "base64"))).toBeUndefined();
  });
});

describe("binary attributes", () => {
  const guidBytes = Buffer.from("BpazOkLGm0iEtljAONPvOQ==", "base64");
  it("renders objectGUID, objectSid and mS-DS-ConsistencyGuid in their string forms, by any case", () => {
    const entry = toLdapEntry({
      dn: "x",
      objectGUID: guidBytes,
      objectSid: Buffer.from("AQIAAAAAAAUgAAAAIAIAAA==", "base64"),
      "mS-DS-ConsistencyGuid": guidBytes,
    });
    expect(entry.first("objectguid")).toBe("3ab39606-c642-489b-84b6-58c038d3ef39");
    expect(entry.first("OBJECTSID")).toBe("S-1-5-32-544");
    expect(entry.values("ms-ds-consistencyguid")).toEqual(["3ab39606-c642-489b-84b6-58c038d3ef39"]);
    expect(entry.binary("objectGUID")).toEqual([guidBytes]);
    // Mapped by name, the uuid is the GUID string, never the bytes decoded as text.
    expect(
      mapEntry(entry, { ...defaultMapping(), uuid: "objectGUID" }, { passwords: false }),
    ).toMatchObject({ uuid: "3ab39606-c642-489b-84b6-58c038d3ef39" });
  });

  it("gives no uuid for an objectGUID that is not 16 bytes, and base64 for other bytes", () => {
    const entry = toLdapEntry({
      dn: "x",
      objectGUID: Buffer.alloc(4),
      jpegPhoto: Buffer.from([255, 0]),
    });
    expect(entry.first("objectGUID")).toBeUndefined();
    expect(
      mapEntry(entry, { ...defaultMapping(), uuid: "objectGUID" }, { passwords: false }),
    ).toEqual({
      skipped: "it has no uuid attribute",
    });
    expect(entry.first("jpegPhoto")).toBe("/wA=");
  });

  it("asks ldapts for the bytes by each spelling, as it compares names case-sensitively", () => {
    expect(bufferAttributeNames(["jpegPhoto"])).toEqual(
      expect.arrayContaining([
        "objectGUID",
        "objectguid",
        "objectSid",
        "objectsid",
        "jpegPhoto",
        "jpegphoto",
      ]),
    );
  });
});

const openLdapEntry = toLdapEntry({
  dn: "uid=zoe,ou=people,dc=example,dc=test",
  entryUUID: "c865f078-e923-4ebe-a584-01347423bc9e",
  objectGUID: [],
  uid: ["zoe", "zoe.alias"],
  givenName: "Zoë",
  sn: "Ångström",
  CN: ["Zoë Ångström", "Ångström, Zoë"],
  mail: [],
  employeeNumber: "100042",
  userPassword: "{SSHA}6idPQXltmUxRO71xxKUkUixM0Ec=",
});

describe("mapEntry with the default mapping", () => {
  it("maps an OpenLDAP inetOrgPerson: entryUUID, first values, cn for the full name, no mail", () => {
    expect(mapEntry(openLdapEntry, defaultMapping(), { passwords: false })).toEqual({
      uuid: "c865f078-e923-4ebe-a584-01347423bc9e",
      username: "zoe",
      firstName: "Zoë",
      lastName: "Ångström",
      fullName: "Zoë Ångström",
    });
  });

  it("prefers displayName to cn, and reads attribute names case-insensitively", () => {
    const entry = toLdapEntry({ dn: "x", entryuuid: "u1", displayname: "Dr. Zoë", cn: "Zoë" });
    expect(mapEntry(entry, defaultMapping(), { passwords: false })).toEqual({
      uuid: "u1",
      fullName: "Dr. Zoë",
    });
  });

  it("maps a recorded Active Directory entry: binary objectGUID as AD's GUID, sAMAccountName", () => {
    const entry = toLdapEntry({
      dn: "CN=Jane Doe,OU=Staff,DC=corp,DC=example",
      objectGUID: guid("BpazOkLGm0iEtljAONPvOQ=="),
      sAMAccountName: "jdoe",
      givenName: "Jane",
      sn: "Doe",
      displayName: "Jane Doe",
      mail: "jane.doe@corp.example",
    });
    expect(mapEntry(entry, defaultMapping("sAMAccountName"), { passwords: false })).toEqual(
      recordedAdUser,
    );
  });

  it("sends passwords only when asked, the {SCHEME} prefix as password_format", () => {
    const mapped = (userPassword: string) =>
      mapEntry(toLdapEntry({ dn: "x", entryUUID: "u1", userPassword }), defaultMapping(), {
        passwords: true,
      });
    expect(mapped("{SSHA}abc=")).toMatchObject({ password: "abc=", passwordFormat: "SSHA" });
    expect(mapped("{PBKDF2-SHA512}10000$s$h")).toMatchObject({
      password: "10000$s$h",
      passwordFormat: "PBKDF2-SHA512",
    });
    expect(mapped("clear text")).toMatchObject({ password: "clear text", passwordFormat: "plain" });
    expect(mapEntry(openLdapEntry, defaultMapping(), { passwords: false })).not.toHaveProperty(
      "password",
    );
  });

  it("skips an entry without a uuid, saying why", () => {
    expect(
      mapEntry(toLdapEntry({ dn: "x", uid: "a" }), defaultMapping(), { passwords: false }),
    ).toEqual({ skipped: "it has no uuid attribute" });
  });

  it("ignores an objectGUID that is not 16 bytes and falls back to entryUUID", () => {
    const entry = toLdapEntry({ dn: "x", objectGUID: Buffer.alloc(4), entryUUID: "u2" });
    expect(directoryUuid(entry)).toBe("u2");
  });
});

describe("mapping overrides", () => {
  it("takes an attribute name, a function or null per field", () => {
    const mapping = {
      ...defaultMapping(),
      userId: "employeeNumber",
      email: (entry: ReturnType<typeof toLdapEntry>) => `${entry.first("uid")}@corp.example`,
      fullName: null,
    };
    expect(mapEntry(openLdapEntry, mapping, { passwords: false })).toEqual({
      uuid: "c865f078-e923-4ebe-a584-01347423bc9e",
      userId: "100042",
      username: "zoe",
      firstName: "Zoë",
      lastName: "Ångström",
      email: "zoe@corp.example",
    });
  });
});

describe("attributesToRequest", () => {
  it("asks for what the default mapping reads, and userPassword only with passwords", () => {
    expect(attributesToRequest(defaultMapping(), { passwords: false }).sort()).toEqual(
      [...uuidAttributes, "uid", "givenName", "sn", "displayName", "cn", "mail"].sort(),
    );
    expect(attributesToRequest(defaultMapping(), { passwords: true })).toContain("userPassword");
  });

  it("asks for every user attribute for a function of the caller's, unless told which", () => {
    const mapping = { ...defaultMapping(), email: () => "x" };
    expect(attributesToRequest(mapping, { passwords: false })).toContain("*");
    expect(attributesToRequest(mapping, { passwords: false, extra: ["proxyAddresses"] })).toEqual(
      expect.arrayContaining(["proxyAddresses"]),
    );
    expect(
      attributesToRequest(mapping, { passwords: false, extra: ["proxyAddresses"] }),
    ).not.toContain("*");
  });
});

describe("what the read of uuids alone asks for", () => {
  const full = ["*", "+"];
  it("asks for exactly what the uuid's mapping reads", () => {
    expect(uuidAttributesToRequest(defaultMapping(), full)).toEqual([...uuidAttributes]);
    expect(uuidAttributesToRequest({ ...defaultMapping(), uuid: "employeeNumber" }, full)).toEqual([
      "employeeNumber",
    ]);
    const declared = fromAttributes(["employeeNumber", "entryUUID"], (entry) =>
      entry.first("employeeNumber"),
    );
    expect(uuidAttributesToRequest({ ...defaultMapping(), uuid: declared }, full)).toEqual([
      "employeeNumber",
      "entryUUID",
    ]);
  });

  it("asks for what the full read asks for when a function does not say what it reads", () => {
    const mapping = { ...defaultMapping(), uuid: (entry: LdapEntry) => entry.first("x") };
    const everything = attributesToRequest(mapping, { passwords: false });
    // entryUUID is an operational attribute: `*` alone would not bring it.
    expect(everything).toEqual(expect.arrayContaining(["*", "+"]));
    expect(uuidAttributesToRequest(mapping, everything)).toBe(everything);
  });

  it("maps the uuid alone in that read, without calling the other fields' functions", () => {
    const entry = toLdapEntry({ dn: "x", entryUUID: "u1" });
    const mapping = {
      ...defaultMapping(),
      email: () => {
        throw new Error("not called on the read of uuids");
      },
    };
    expect(mapEntry(entry, mapping, { passwords: false, uuidOnly: true })).toEqual({ uuid: "u1" });
  });

  it("reads a declared function's attributes in the full read, not everything", () => {
    const mapping = {
      ...defaultMapping(),
      email: fromAttributes(["proxyAddresses"], (entry) => entry.first("proxyAddresses")),
    };
    const asked = attributesToRequest(mapping, { passwords: false });
    expect(asked).toContain("proxyAddresses");
    expect(asked).not.toContain("*");
  });
});

describe("the portable mapping (readInWorker)", () => {
  it("rebuilds the default mapping, functions included, to map an entry the same way", () => {
    const mapping = { ...defaultMapping("uid"), userId: "employeeNumber" };
    const portable = toPortableMapping(mapping);
    // What crosses to a thread is data: it survives a structured clone.
    const rebuilt = fromPortableMapping(structuredClone(portable) as PortableMapping);
    const options = { passwords: true };
    expect(mapEntry(openLdapEntry, rebuilt, options)).toEqual(
      mapEntry(openLdapEntry, mapping, options),
    );
    expect(mapEntry(openLdapEntry, rebuilt, options)).toMatchObject({
      uuid: "c865f078-e923-4ebe-a584-01347423bc9e",
      fullName: "Zoë Ångström",
      userId: "100042",
    });
  });

  it("names the field a function of the caller's maps, which cannot cross", () => {
    const mapping = { ...defaultMapping(), email: (entry: LdapEntry) => entry.first("mail") };
    expect(toPortableMapping(mapping)).toEqual({ field: "email" });
  });

  it("keeps a field left out as left out", () => {
    const mapping = { ...defaultMapping(), email: null };
    const rebuilt = fromPortableMapping(toPortableMapping(mapping) as PortableMapping);
    expect(mapEntry(openLdapEntry, rebuilt, { passwords: false })).not.toHaveProperty("email");
  });
});
