import type { JsonObject, JsonValue } from "type-fest";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { field, isJsonObject, readJsonObject } from "../integration-api/json-body.ts";

/**
 * A directory the platform authenticates users against (an enabled LDAP source). Pass it as
 * `{ source }` when the platform has several.
 */
export interface IdentitySource {
  /** The LDAP server's host name. */
  hostname: string;
  /** The base DN searched for users, e.g. `dc=example,dc=com`. */
  baseDn: string;
}

/**
 * LDAP attributes: each name (lower-cased, as LDAP names are case-insensitive) maps to its values,
 * always an array, even for one value.
 */
export type IdentityAttributes = Record<string, string[]>;

/** A directory group the user belongs to. */
export interface IdentityGroup {
  dn: string;
  /** The group's id; a string even when numeric ("501"), as the platform sends it. */
  id: string;
  name: string;
  attributes: IdentityAttributes;
}

/** A directory user, as login and user() return it. */
export interface IdentityUser {
  /** The user's distinguished name. */
  dn: string;
  /** The username, per the platform's `ldap_username_field` setting (uid, sAMAccountName...). */
  username: string;
  /** The user's attributes; `userPassword` and `unicodePwd` are dropped, should a directory send them. */
  attributes: IdentityAttributes;
  groups: IdentityGroup[];
}

/** Reads GET /identity/v1/sources: `{"sources":[{"base_dn","hostname"}]}`. */
export function readSources(response: ApiResponse): IdentitySource[] {
  const list = field(readJsonObject(response), "sources");
  // The platform lists enabled sources only; `null` is how Go encodes an empty list.
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) throw new ResponseShapeError(response, "sources is not an array");
  return list.map((item, index) => {
    const hostname = isJsonObject(item) ? field(item, "hostname") : undefined;
    const baseDn = isJsonObject(item) ? field(item, "base_dn") : undefined;
    if (typeof hostname !== "string" || typeof baseDn !== "string") {
      throw new ResponseShapeError(response, `source ${index} lacks a string hostname or base_dn`);
    }
    return { hostname, baseDn };
  });
}

// The platform documents that it never sends the password attribute; if a misconfigured
// directory did, an application that logs the user object would log a hash of it.
const passwordAttributes = new Set(["userpassword", "unicodepwd"]);

/**
 * Reads the login and user body, whose keys are PascalCase on the wire
 * (`{"DN","Username","Attributes","Groups":[{"DN","ID","Name","Attributes"}]}`). DN and Username
 * are required; absent Attributes and Groups (or Go's `null`) read as empty. The attributes
 * `userPassword` and `unicodePwd` are dropped should a directory ever send them.
 */
export function readUser(response: ApiResponse): IdentityUser {
  const wire = readJsonObject(response);
  const shape = (problem: string) => new ResponseShapeError(response, problem);
  const dn = field(wire, "DN");
  const username = field(wire, "Username");
  if (typeof dn !== "string" || typeof username !== "string") {
    throw shape("DN and Username must be strings");
  }
  const groups = field(wire, "Groups") ?? [];
  if (!Array.isArray(groups)) throw shape("Groups is not an array");
  return {
    dn,
    username,
    attributes: readAttributes(field(wire, "Attributes"), "Attributes", shape),
    groups: groups.map((group, index) => readGroup(group, index, shape)),
  };
}

function readGroup(
  wire: JsonValue,
  index: number,
  shape: (problem: string) => ResponseShapeError,
): IdentityGroup {
  if (!isJsonObject(wire)) throw shape(`group ${index} is not an object`);
  const dn = field(wire, "DN");
  const id = field(wire, "ID");
  const name = field(wire, "Name");
  if (typeof dn !== "string" || typeof name !== "string") {
    throw shape(`group ${index} lacks a string DN or Name`);
  }
  if (typeof id !== "string" && !Number.isSafeInteger(id)) {
    throw shape(`group ${index} lacks an ID`);
  }
  return {
    dn,
    id: String(id),
    name,
    attributes: readAttributes(field(wire, "Attributes"), `group ${index} Attributes`, shape),
  };
}

/**
 * A map of attribute name to values. A lone string reads as one value (the docs once called the
 * field an array; the wire has always been string to string[]). Built with Object.fromEntries, so
 * a `__proto__` name stays a plain key.
 */
function readAttributes(
  wire: JsonValue | undefined,
  where: string,
  shape: (problem: string) => ResponseShapeError,
): IdentityAttributes {
  if (wire === undefined || wire === null) return {};
  if (!isJsonObject(wire)) throw shape(`${where} is not an object`);
  const merged = new Map<string, string[]>();
  for (const [name, value] of Object.entries(wire as JsonObject)) {
    const values = typeof value === "string" ? [value] : value;
    if (!Array.isArray(values) || !values.every((item) => typeof item === "string")) {
      throw shape(`${where}.${name} is not a list of strings`);
    }
    const key = name.toLowerCase();
    if (passwordAttributes.has(key)) continue;
    merged.set(key, [...(merged.get(key) ?? []), ...(values as string[])]);
  }
  return Object.fromEntries(merged);
}

/** Reads GET /identity/v1/user/:username/exists: `true` or `false` as text/plain. */
export function readExists(response: ApiResponse): boolean {
  const text = response.body.trim();
  if (text === "true") return true;
  if (text === "false") return false;
  throw new ResponseShapeError(response, "expected true or false");
}
