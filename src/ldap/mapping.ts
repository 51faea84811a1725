import type { UserRecord } from "../users/user-record.ts";
import { objectGuidToString, objectSidToString } from "./object-guid.ts";

/**
 * A directory entry as mappings read it. Attribute names are case-insensitive, as in LDAP; an
 * absent attribute has no values. Text attributes are UTF-8 strings. A binary attribute
 * ({@link binaryAttributes}, and those named in `binaryAttributes`) is read as bytes, never decoded
 * as text: `values` and `first` give its standard string form (objectGUID and
 * mS-DS-ConsistencyGuid: the GUID string; objectSid: `S-1-5-21-...`; any other: base64), and
 * {@link LdapEntry.binary} its bytes.
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
 * The attributes always read as bytes: Active Directory's objectGUID, objectSid and
 * mS-DS-ConsistencyGuid (Entra Connect's source anchor, a GUID in objectGUID's byte order).
 * Name others in `binaryAttributes`: they are read as bytes and rendered as base64.
 */
export const binaryAttributes = ["objectGUID", "objectSid", "mS-DS-ConsistencyGuid"] as const;

/** The standard string form of a binary attribute's value, by its lower-case name. */
const renderers = new Map<string, (bytes: Buffer) => string | undefined>([
  ["objectguid", guidOrUndefined],
  ["ms-ds-consistencyguid", guidOrUndefined],
  ["objectsid", objectSidToString],
]);

function guidOrUndefined(bytes: Buffer): string | undefined {
  // A value that is not 16 bytes is no GUID: no uuid rather than a wrong one.
  return bytes.length === 16 ? objectGuidToString(bytes) : undefined;
}

/**
 * The names to hand ldapts as `explicitBufferAttributes`: it compares them with the name the
 * server sends, case-sensitively, so each name goes as given, in lower case, and as the
 * built-in list spells it. Any other attribute whose value is not valid UTF-8 arrives as bytes too.
 */
export function bufferAttributeNames(extra: readonly string[] = []): string[] {
  const names = new Set<string>();
  for (const name of [...binaryAttributes, ...extra]) names.add(name).add(name.toLowerCase());
  return [...names];
}

/**
 * Where one field of the user record comes from: an attribute's name (its first value), a
 * function of the entry, or `null` for a field that is never sent.
 */
export type FieldSource = string | ((entry: LdapEntry) => string | undefined) | null;

/** Functions that declared the attributes they read ({@link fromAttributes}). */
const declaredReads = new WeakMap<object, readonly string[]>();

/**
 * A mapping function that names the attributes it reads, so that each search asks for exactly
 * those: the read that finds deletions asks only for what the uuid's mapping reads. A function
 * without a declaration is given whatever the full read asks for (every user and operational
 * attribute, `*` and `+`, unless `attributes` names them), in both reads, so that it maps an entry
 * to the same uuid in each.
 *
 * @example
 * ```ts
 * mapping: {
 *   uuid: fromAttributes(["employeeNumber", "entryUUID"], (entry) =>
 *     entry.first("employeeNumber") ?? entry.first("entryUUID")),
 * }
 * ```
 */
export function fromAttributes(
  attributes: readonly string[],
  map: (entry: LdapEntry) => string | undefined,
): (entry: LdapEntry) => string | undefined {
  const declared = (entry: LdapEntry) => map(entry);
  declaredReads.set(declared, [...attributes]);
  return declared;
}

/** The attributes a field's source reads, or undefined for a function that did not say. */
function readsOf(source: FieldSource): readonly string[] | undefined {
  if (source === null) return [];
  if (typeof source === "string") return [source];
  return declaredReads.get(source) ?? defaultReads.get(source);
}

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
 * The attributes a search must ask for: each one a mapping names, those the defaults and
 * {@link fromAttributes} functions read, and `extra` for mapping functions of the caller's that
 * did not declare theirs. With such a function and no `extra`, every user and operational
 * attribute (`*`, `+`), as there is no telling what it reads (entryUUID is operational).
 */
export function attributesToRequest(
  mapping: DirectoryMapping,
  { extra, passwords }: { extra?: readonly string[]; passwords: boolean },
): string[] {
  const names = new Set<string>(extra);
  let unknownFunction = false;
  for (const source of Object.values(mapping) as FieldSource[]) {
    const reads = readsOf(source);
    if (reads) for (const name of reads) names.add(name);
    else unknownFunction = true;
  }
  if (passwords) names.add("userPassword");
  if (unknownFunction && extra === undefined) names.add("*").add("+");
  return [...names];
}

/**
 * The attributes the read that finds deletions asks for: those the uuid's mapping reads. A
 * function that did not declare them gets `full` (what the full read asks for), so that both
 * reads map an entry to the same uuid.
 */
export function uuidAttributesToRequest(mapping: DirectoryMapping, full: string[]): string[] {
  const reads = readsOf(mapping.uuid);
  return reads ? [...reads] : full;
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
  { passwords, uuidOnly = false }: { passwords: boolean; uuidOnly?: boolean },
): UserRecord | { skipped: string } {
  const uuid = read(entry, mapping.uuid);
  if (uuid === undefined || uuid === "") return { skipped: "it has no uuid attribute" };
  const user: UserRecord = { uuid };
  // The read that finds deletions has only the uuid's attributes: the other fields' functions
  // would see an entry without theirs.
  if (uuidOnly) return user;
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

/**
 * An {@link LdapEntry} over an entry as ldapts returns it: strings, or Buffers for the attributes
 * asked for as bytes ({@link bufferAttributeNames}) and for values that are not valid UTF-8.
 * Bytes are never decoded as text: a binary attribute's values are rendered in their standard
 * string form, and bytes of any other attribute as base64 (declare it in `binaryAttributes`).
 */
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
  const asText = (attribute: string) => {
    const render = renderers.get(attribute.toLowerCase()) ?? base64;
    return (value: string | Buffer) => (typeof value === "string" ? value : render(value));
  };
  return {
    dn: raw.dn,
    values: (attribute) =>
      values(attribute)
        .map(asText(attribute))
        .filter((value): value is string => value !== undefined),
    first: (attribute) => {
      const [value] = values(attribute);
      return value === undefined ? undefined : asText(attribute)(value);
    },
    binary: (attribute) =>
      values(attribute).map((value) => (typeof value === "string" ? Buffer.from(value) : value)),
  };
}

function base64(bytes: Buffer): string {
  return bytes.toString("base64");
}
