import type { UserRecord } from "../provisioning/user-record.ts";
import { objectGuidToString } from "./object-guid.ts";

/**
 * A directory entry as mappings read it. Attribute names are case-insensitive, as in LDAP; an
 * absent attribute has no values. Values are strings (UTF-8), except those of binary attributes
 * such as objectGUID, which {@link LdapEntry.binary} gives as bytes.
 */
export interface LdapEntry {
  readonly dn: string;
  /** Every value of the attribute, in the order the server sent them. */
  values(attribute: string): string[];
  /** The first value of the attribute: the one a multi-valued attribute contributes. */
  first(attribute: string): string | undefined;
  /** The attribute's values as bytes (binary attributes: objectGUID). */
  binary(attribute: string): Uint8Array[];
}

/**
 * Where one field of the user record comes from: an attribute's name (its first value), a
 * function of the entry, or `null` for a field that is never sent.
 */
export type FieldSource = string | ((entry: LdapEntry) => string | undefined) | null;

/**
 * How an entry becomes a user record, field by field; override any of them with
 * `createDirectorySync({ mapping })`. See {@link defaultMapping} for the defaults.
 */
export interface DirectoryMapping {
  /** The permanent identifier. An entry without one is skipped and reported, never sent. */
  uuid: Exclude<FieldSource, null>;
  userId: FieldSource;
  username: FieldSource;
  firstName: FieldSource;
  lastName: FieldSource;
  fullName: FieldSource;
  email: FieldSource;
}

/** The attributes that give an entry's permanent identifier, in the order they are tried. */
export const uuidAttributes = ["objectGUID", "entryUUID"] as const;

/**
 * The default mapping: uuid from Active Directory's objectGUID (as its canonical GUID string)
 * or else OpenLDAP's entryUUID; username from `usernameField` (`uid`; `sAMAccountName` for AD);
 * first, last and full name from givenName, sn and displayName (else cn); email from mail;
 * user_id not sent until an attribute is named for it (`employeeNumber`, `uidNumber`, ...).
 * A multi-valued attribute contributes its first value.
 */
export function defaultMapping(usernameField = "uid"): DirectoryMapping {
  return {
    uuid: directoryUuid,
    userId: null,
    username: usernameField,
    firstName: "givenName",
    lastName: "sn",
    fullName: displayNameOrCn,
    email: "mail",
  };
}

/** The uuid of the default mapping: objectGUID rendered as a GUID, else entryUUID. */
export function directoryUuid(entry: LdapEntry): string | undefined {
  const [guid] = entry.binary("objectGUID");
  return guid && guid.length === 16 ? objectGuidToString(guid) : entry.first("entryUUID");
}

/**
 * The attributes a search must ask for: each one a mapping names, those the defaults read, and
 * `extra` for mapping functions of the caller's. With a function of the caller's and no `extra`,
 * every user attribute (`*`), as there is no telling what it reads.
 */
export function attributesToRequest(
  mapping: DirectoryMapping,
  { extra, passwords }: { extra?: readonly string[]; passwords: boolean },
): string[] {
  const names = new Set<string>(extra);
  let unknownFunction = false;
  for (const source of Object.values(mapping) as FieldSource[]) {
    if (typeof source === "string") names.add(source);
    else if (typeof source === "function") {
      const reads = defaultReads.get(source);
      if (reads) for (const name of reads) names.add(name);
      else unknownFunction = true;
    }
  }
  if (passwords) names.add("userPassword");
  if (unknownFunction && extra === undefined) names.add("*");
  return [...names];
}

function displayNameOrCn(entry: LdapEntry): string | undefined {
  return entry.first("displayName") ?? entry.first("cn");
}

/** What the default mapping's functions read. */
const defaultReads = new Map<FieldSource, readonly string[]>([
  [directoryUuid, uuidAttributes],
  [displayNameOrCn, ["displayName", "cn"]],
]);

/**
 * A mapping as another thread can rebuild it: attribute names, `null`, and the defaults' functions
 * by name (functions do not cross threads).
 */
export type PortableMapping = Record<keyof DirectoryMapping, string | null | { builtin: string }>;

const builtins = new Map<string, (entry: LdapEntry) => string | undefined>([
  ["directoryUuid", directoryUuid],
  ["displayNameOrCn", displayNameOrCn],
]);

/** The mapping's {@link PortableMapping}, or the name of a field a function of the caller's maps. */
export function toPortableMapping(mapping: DirectoryMapping): PortableMapping | { field: string } {
  const portable: Partial<PortableMapping> = {};
  for (const [field, source] of Object.entries(mapping) as [
    keyof DirectoryMapping,
    FieldSource,
  ][]) {
    if (typeof source !== "function") portable[field] = source;
    else {
      const name = [...builtins].find(([, builtin]) => builtin === source)?.[0];
      if (name === undefined) return { field };
      portable[field] = { builtin: name };
    }
  }
  return portable as PortableMapping;
}

/** The mapping a {@link PortableMapping} describes. */
export function fromPortableMapping(portable: PortableMapping): DirectoryMapping {
  return Object.fromEntries(
    Object.entries(portable).map(([field, source]) => [
      field,
      source !== null && typeof source === "object" ? builtins.get(source.builtin) : source,
    ]),
  ) as unknown as DirectoryMapping;
}

const textFields = ["userId", "username", "firstName", "lastName", "fullName", "email"] as const;

/**
 * The user record of an entry, or the reason it cannot be sent (no uuid). With `passwords`, the
 * first userPassword goes out as password, its `{SCHEME}` prefix as password_format (`SSHA`,
 * `CRYPT`, ...), or `plain` when it has none: the directory stores it in clear text.
 */
export function mapEntry(
  entry: LdapEntry,
  mapping: DirectoryMapping,
  { passwords }: { passwords: boolean },
): UserRecord | { skipped: string } {
  const uuid = read(entry, mapping.uuid);
  if (uuid === undefined || uuid === "") return { skipped: "it has no uuid attribute" };
  const user: UserRecord = { uuid };
  for (const field of textFields) {
    const value = read(entry, mapping[field]);
    if (value !== undefined) user[field] = value;
  }
  const password = passwords ? entry.first("userPassword") : undefined;
  if (password !== undefined) {
    const scheme = /^\{([^}]+)\}/.exec(password);
    user.password = scheme ? password.slice(scheme[0].length) : password;
    user.passwordFormat = scheme ? (scheme[1] as string) : "plain";
  }
  return user;
}

function read(entry: LdapEntry, source: FieldSource): string | undefined {
  if (source === null) return undefined;
  return typeof source === "string" ? entry.first(source) : source(entry);
}

/** An {@link LdapEntry} over an entry as ldapts returns it (strings, or Buffers when binary). */
export function toLdapEntry(raw: {
  dn: string;
  [attribute: string]: string | string[] | Buffer | Buffer[];
}): LdapEntry {
  const byName = new Map<string, (string | Buffer)[]>();
  for (const [name, value] of Object.entries(raw)) {
    if (name === "dn") continue;
    byName.set(name.toLowerCase(), Array.isArray(value) ? value : [value]);
  }
  const values = (attribute: string) => byName.get(attribute.toLowerCase()) ?? [];
  const asText = (value: string | Buffer) =>
    typeof value === "string" ? value : value.toString("utf8");
  return {
    dn: raw.dn,
    values: (attribute) => values(attribute).map(asText),
    first: (attribute) => {
      const [value] = values(attribute);
      return value === undefined ? undefined : asText(value);
    },
    binary: (attribute) =>
      values(attribute).map((value) => (typeof value === "string" ? Buffer.from(value) : value)),
  };
}
