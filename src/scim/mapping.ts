// The one mapping between a SCIM User and the store's user record. The record's documented fields
// take the attributes a application reads: `username` ← userName, `firstName` ← name.givenName,
// `lastName` ← name.familyName, `fullName` ← displayName (else name.formatted), `email` ← the
// primary email (else the first). The whole resource, `externalId`, `active` and the rest included,
// is kept round trip under `extra.scim`, with the times of its creation and last change. Reading
// back, the documented fields win over `extra.scim`: a change the Provisioning API (or the
// application) made to them shows through SCIM too.
import type { JsonValue } from "type-fest";
import type { UserPatch, UserRecord } from "../provisioning/user-record.ts";
import { type JsonObject, ownValue } from "./filter.ts";
import { copyResource, plainObject, setOwn } from "./resource.ts";

/** The key of `UserRecord.extra` under which the SCIM resource is kept. */
export const scimExtraKey = "scim";

/** When the SCIM server created and last changed a user, as kept under `extra.scim.meta`. */
export interface ScimTimes {
  created?: string | undefined;
  lastModified?: string | undefined;
}

/** The SCIM resource of a stored user, without `id`, `schemas` and `meta`; and its times. */
export function resourceOf(user: UserRecord): { resource: JsonObject; times: ScimTimes } {
  const kept = user.extra?.[scimExtraKey];
  const resource =
    typeof kept === "object" && kept !== null && !Array.isArray(kept)
      ? copyResource(kept as JsonObject)
      : plainObject();
  const meta = resource.meta as JsonObject | undefined;
  const times: ScimTimes = {
    created: typeof meta?.created === "string" ? meta.created : undefined,
    lastModified: typeof meta?.lastModified === "string" ? meta.lastModified : undefined,
  };
  delete resource.meta;
  overlay(resource, user);
  if (typeof resource.active !== "boolean") resource.active = true;
  return { resource, times };
}

/** Puts the record's documented fields over the kept resource. */
function overlay(resource: JsonObject, user: UserRecord): void {
  setOrDelete(resource, "userName", user.username);
  const name = { ...((resource.name as JsonObject | undefined) ?? {}) };
  setOrDelete(name, "givenName", user.firstName);
  setOrDelete(name, "familyName", user.lastName);
  if (typeof resource.displayName === "string" || typeof name.formatted !== "string") {
    setOrDelete(resource, "displayName", user.fullName);
  } else {
    setOrDelete(name, "formatted", user.fullName);
  }
  if (Object.keys(name).length > 0) resource.name = name;
  else delete resource.name;
  const emails = Array.isArray(resource.emails) ? [...(resource.emails as JsonObject[])] : [];
  const at = mappedEmail(emails);
  if (user.email === undefined) {
    if (at !== -1) emails.splice(at, 1);
  } else if (at === -1) {
    emails.push({ value: user.email, type: "work", primary: true });
  } else {
    emails[at] = { ...emails[at], value: user.email };
  }
  if (emails.length > 0) resource.emails = emails;
  else delete resource.emails;
}

function setOrDelete(object: JsonObject, key: string, value: string | undefined): void {
  if (value === undefined) delete object[key];
  else setOwn(object, key, value);
}

/** The index of the email the record's `email` holds: the primary one, else the first. */
function mappedEmail(emails: readonly JsonObject[]): number {
  const primary = emails.findIndex((email) => email?.primary === true);
  if (primary !== -1) return primary;
  return emails.findIndex((email) => typeof ownValue(email, "value") === "string");
}

/**
 * The store patch that writes `resource` whole: each mapped documented field set or cleared, and
 * `extra.scim` replaced (other `extra` keys, and the fields SCIM does not map, are kept).
 */
export function patchOf(uuid: string, resource: JsonObject, times: ScimTimes): UserPatch {
  const name = resource.name as JsonObject | undefined;
  const emails = Array.isArray(resource.emails) ? (resource.emails as JsonObject[]) : [];
  const at = mappedEmail(emails);
  const email = at === -1 ? undefined : ownValue(emails[at], "value");
  const fullName = resource.displayName ?? name?.formatted;
  const kept = copyResource(resource);
  const meta = plainObject();
  if (times.created !== undefined) meta.created = times.created;
  if (times.lastModified !== undefined) meta.lastModified = times.lastModified;
  kept.meta = meta;
  return {
    uuid,
    username: stringOrNull(resource.userName),
    firstName: stringOrNull(name?.givenName),
    lastName: stringOrNull(name?.familyName),
    fullName: stringOrNull(fullName),
    email: stringOrNull(email),
    extra: { [scimExtraKey]: kept as JsonValue },
  };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
