// The pieces of the Active Directory support that need no server: telling AD from its root DSE,
// telling accounts apart, the read plan, and the DirSync control's BER (the real DC is in
// active-directory.test.ts).
import { BerReader, BerWriter } from "ldapts";
import { describe, expect, it } from "vitest";
import {
  accountKind,
  activeDirectoryUserFilter,
  addEntry,
  type DisabledAccounts,
  defaultFilter,
  readPlan,
  serverProfile,
} from "../../src/ldap/active-directory.ts";
import { DirSyncControl, dirSyncOid } from "../../src/ldap/dirsync-control.ts";
import { defaultMapping, toLdapEntry } from "../../src/ldap/mapping.ts";
import type { DirectoryPage } from "../../src/sync/source.ts";

const guid = Buffer.from("BpazOkLGm0iEtljAONPvOQ==", "base64");
const entry = (attributes: Record<string, string | Buffer>) =>
  toLdapEntry({ dn: "CN=x,DC=example,DC=test", objectGUID: guid, ...attributes });

describe("serverProfile", () => {
  it("tells Active Directory by LDAP_CAP_ACTIVE_DIRECTORY_OID, and keeps what DirSync needs", () => {
    const profile = serverProfile(
      toLdapEntry({
        dn: "",
        supportedCapabilities: ["1.2.840.113556.1.4.800", "1.2.840.113556.1.4.1670"],
        supportedControl: [dirSyncOid, "1.2.840.113556.1.4.319"],
        defaultNamingContext: "DC=example,DC=test",
        dsServiceName: "CN=NTDS Settings,CN=DC1,DC=example,DC=test",
      }),
    );
    expect(profile).toEqual({
      activeDirectory: true,
      controls: [dirSyncOid, "1.2.840.113556.1.4.319"],
      namingContext: "DC=example,DC=test",
      dsServiceName: "CN=NTDS Settings,CN=DC1,DC=example,DC=test",
    });
  });

  it("does not take OpenLDAP, or an AD LDS-only capability, for Active Directory", () => {
    expect(
      serverProfile(toLdapEntry({ dn: "", supportedControl: ["1.3.6.1.4.1.4203.1.9.1.1"] })),
    ).toMatchObject({ activeDirectory: false });
    expect(
      serverProfile(toLdapEntry({ dn: "", supportedCapabilities: "1.2.840.113556.1.4.1851" })),
    ).toMatchObject({ activeDirectory: false });
    expect(serverProfile(undefined)).toEqual({ activeDirectory: false, controls: [] });
  });
});

describe("accountKind", () => {
  it("tells system accounts, disabled accounts (ACCOUNTDISABLE, 0x2) and users apart", () => {
    expect(accountKind(entry({ isCriticalSystemObject: "TRUE", userAccountControl: "512" }))).toBe(
      "system",
    );
    expect(accountKind(entry({ userAccountControl: "514" }))).toBe("disabled");
    expect(accountKind(entry({ userAccountControl: "66050" }))).toBe("disabled");
    expect(accountKind(entry({ userAccountControl: "512" }))).toBe("user");
    expect(accountKind(entry({ userAccountControl: "66048" }))).toBe("user");
    expect(accountKind(entry({ isCriticalSystemObject: "FALSE" }))).toBe("user");
    expect(accountKind(entry({}))).toBe("user");
  });
});

describe("readPlan and addEntry", () => {
  const ad = { activeDirectory: true, controls: [] };
  const other = { activeDirectory: false, controls: [] };
  const options = { mapping: defaultMapping(), passwords: false, defaultUsername: true };

  it("reads person user accounts with sAMAccountName on AD when nothing else is said", () => {
    const plan = readPlan(options, ad);
    expect(plan.filter).toBe(activeDirectoryUserFilter);
    expect(plan.mapping.username).toBe("sAMAccountName");
    expect(plan.attributes).toEqual(
      expect.arrayContaining(["userAccountControl", "sAMAccountName"]),
    );
    expect(plan.uuidAttributes).toEqual(
      expect.arrayContaining(["objectGUID", "userAccountControl"]),
    );
    expect(plan.ad).toEqual({ disabledAccounts: "keep", leaveSystemOut: true });
  });

  it("keeps the caller's filter and username, and the defaults elsewhere", () => {
    const plan = readPlan(
      {
        ...options,
        filter: "(objectClass=user)",
        defaultUsername: false,
        disabledAccounts: "sync",
      },
      ad,
    );
    expect(plan).toMatchObject({
      filter: "(objectClass=user)",
      ad: { disabledAccounts: "sync", leaveSystemOut: false },
    });
    expect(plan.mapping.username).toBe("uid");
    const elsewhere = readPlan(options, other);
    expect(elsewhere.filter).toBe(defaultFilter);
    expect(elsewhere.mapping.username).toBe("uid");
    expect(elsewhere.ad).toBeUndefined();
  });

  const seen = (disabledAccounts: DisabledAccounts, uuidsOnly: boolean) => {
    const plan = readPlan({ ...options, disabledAccounts }, ad);
    const page: DirectoryPage = { users: [], skipped: [] };
    const base = { sAMAccountName: "jdoe", isCriticalSystemObject: "FALSE" };
    addEntry(
      entry({ ...base, userAccountControl: "514" }),
      plan,
      { uuidsOnly, passwords: false },
      page,
    );
    return page;
  };

  it("lets the deletions read see a kept disabled account, and the main read leave it out", () => {
    expect(seen("keep", true).users).toHaveLength(1);
    expect(seen("keep", false)).toMatchObject({ users: [], disabled: 1 });
    expect(seen("sync", false)).toMatchObject({ users: [{ username: "jdoe" }], disabled: 1 });
    expect(seen("delete", true).users).toEqual([]);
    expect(seen("delete", false)).toMatchObject({ users: [], disabled: 1 });
  });

  it("counts system accounts as non-users, and skips a user without a username", () => {
    const plan = readPlan(options, ad);
    const page: DirectoryPage = { users: [], skipped: [] };
    const read = { uuidsOnly: false, passwords: false };
    addEntry(entry({ isCriticalSystemObject: "TRUE", sAMAccountName: "krbtgt" }), plan, read, page);
    addEntry(entry({ userAccountControl: "512" }), plan, read, page);
    expect(page).toEqual({
      users: [],
      skipped: [{ dn: "CN=x,DC=example,DC=test", reason: "it has no username" }],
      nonUsers: 1,
    });
  });
});

describe("DirSyncControl", () => {
  it("writes flags 0, a byte ceiling and the cookie in its value (MS-ADTS 3.1.1.3.4.1.3)", () => {
    const writer = new BerWriter();
    new DirSyncControl(Uint8Array.of(1, 2, 3)).write(writer);
    const reader = new BerReader(writer.buffer);
    reader.readSequence();
    expect(reader.readString()).toBe(dirSyncOid);
    expect(reader.readBoolean()).toBe(true);
    const value = new BerReader(reader.readString(0x04, true) as Buffer);
    value.readSequence();
    expect(value.readInt()).toBe(0);
    expect(value.readInt()).toBe(0x100000);
    expect([...(value.readString(0x04, true) as Buffer)]).toEqual([1, 2, 3]);
  });

  it("reads moreResults and the next cookie from the server's answer", () => {
    const writer = new BerWriter();
    writer.startSequence();
    writer.writeInt(1);
    writer.writeInt(0);
    writer.writeBuffer(Buffer.from([9, 8, 7]), 0x04);
    writer.endSequence();
    const control = new DirSyncControl();
    control.parse(new BerReader(writer.buffer));
    expect(control.more).toBe(true);
    expect([...(control.next as Buffer)]).toEqual([9, 8, 7]);
  });
});
