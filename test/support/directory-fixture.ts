// A generated directory of people, the same for a given seed and size: the LDIF that slapadd loads
// into the throwaway slapd, and the people themselves, which the tests compare the synced users
// with. The mix covers what real directories hold: non-ASCII names, entries without mail,
// multi-valued attributes, a displayName on some, hashed and clear-text passwords on a few.
import { createHash } from "node:crypto";

/** The suffix of the throwaway directory, and where the generated people live under it. */
export const suffix = "dc=example,dc=test";
export const peopleDn = `ou=people,${suffix}`;
export const adminDn = `cn=admin,${suffix}`;

/** One generated inetOrgPerson, with every value as it is stored (first value first). */
export interface Person {
  dn: string;
  entryUUID: string;
  uid: string[];
  givenName: string;
  sn: string;
  cn: string[];
  displayName?: string;
  mail: string[];
  employeeNumber: string;
  userPassword?: string;
}

const givenNames = ["Anna", "José", "Zoë", "Łukasz", "Ærøskøbing", "李", "Ömer", "Noël", "Bob"];
const surnames = ["Müller", "Ångström", "O'Brien", "Dvořák", "王", "Smith", "Nuñez", "Ñandú"];

/** The i-th person of the directory (0-based): the same for every run. */
export function person(index: number, base = peopleDn): Person {
  const givenName = givenNames[index % givenNames.length] as string;
  const sn = surnames[Math.floor(index / givenNames.length) % surnames.length] as string;
  const uid = `user${index}`;
  const cn = `${givenName} ${sn}`;
  return {
    dn: `uid=${uid},${base}`,
    entryUUID: uuidOf(`${base}/${index}`),
    // Every 13th has a second uid (a mail alias kept as a login): the first one is the username.
    uid: index % 13 === 5 ? [uid, `alias${index}`] : [uid],
    givenName,
    sn,
    cn: index % 11 === 3 ? [cn, `${sn}, ${givenName}`] : [cn],
    ...(index % 5 === 2 && { displayName: `${cn} (${index})` }),
    // Every 7th has no mail; every 17th has two.
    mail:
      index % 7 === 0
        ? []
        : index % 17 === 1
          ? [`${uid}@example.test`, `${uid}@alias.example.test`]
          : [`${uid}@example.test`],
    employeeNumber: String(100_000 + index),
    ...(index % 50 === 10 && { userPassword: `{SSHA}${hash(`pw${index}`)}` }),
    ...(index % 50 === 20 && { userPassword: `clear-${index}` }),
  };
}

/** The LDIF of an organizational unit and its `count` people, for slapadd or ldapadd. */
export function peopleLdif(count: number, base = peopleDn, { withRoot = false } = {}): string {
  const blocks: string[] = [];
  if (withRoot) {
    blocks.push(
      ldifEntry(suffix, {
        objectClass: ["dcObject", "organization"],
        o: ["Example"],
        dc: ["example"],
      }),
    );
  }
  blocks.push(ldifEntry(base, { objectClass: ["organizationalUnit"], ou: [ouName(base)] }));
  for (let index = 0; index < count; index++) blocks.push(personLdif(person(index, base)));
  return `${blocks.join("\n")}\n`;
}

/** The attributes of a person as an LDAP add takes them. */
export function personAttributes(someone: Person): Record<string, string[]> {
  return {
    objectClass: ["inetOrgPerson"],
    uid: someone.uid,
    givenName: [someone.givenName],
    sn: [someone.sn],
    cn: someone.cn,
    ...(someone.displayName && { displayName: [someone.displayName] }),
    ...(someone.mail.length > 0 && { mail: someone.mail }),
    employeeNumber: [someone.employeeNumber],
    ...(someone.userPassword && { userPassword: [someone.userPassword] }),
  };
}

function personLdif(someone: Person): string {
  return ldifEntry(someone.dn, { ...personAttributes(someone), entryUUID: [someone.entryUUID] });
}

function ldifEntry(dn: string, attributes: Record<string, string[]>): string {
  const lines = [ldifLine("dn", dn)];
  for (const [name, values] of Object.entries(attributes)) {
    for (const value of values) lines.push(ldifLine(name, value));
  }
  return `${lines.join("\n")}\n`;
}

// RFC 2849: a value that is not a SAFE-STRING (beyond printable ASCII, or starting with a space,
// colon or less-than sign, or ending with a space) goes base64-encoded after a double colon.
function ldifLine(name: string, value: string): string {
  const safe = /^[!-9;=-~][ -~]*$/.test(value) && !value.endsWith(" ");
  return safe ? `${name}: ${value}` : `${name}:: ${Buffer.from(value).toString("base64")}`;
}

function ouName(dn: string): string {
  return (/^ou=([^,]+)/.exec(dn)?.[1] ?? "people") as string;
}

function uuidOf(seed: string): string {
  const hex = createHash("sha256").update(seed).digest("hex");
  // Version 4 and the RFC 4122 variant, so that it reads as any directory's entryUUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function hash(text: string): string {
  return createHash("sha1").update(text).digest("base64");
}

/**
 * The user that the recorded Active Directory entry (objectGUID `BpazOkLGm0iEtljAONPvOQ==`,
 * sAMAccountName jdoe) maps to: the GUID in AD's byte order, as AD's own tools print it.
 */
export const recordedAdUser = {
  uuid: "3ab39606-c642-489b-84b6-58c038d3ef39",
  username: "jdoe",
  firstName: "Jane",
  lastName: "Doe",
  fullName: "Jane Doe",
  email: "jane.doe@corp.example",
};
