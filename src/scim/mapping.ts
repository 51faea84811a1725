// The one mapping between a SCIM User and the store's user record. The record's documented fields
// take the attributes an application reads: `username` ← userName, `firstName` ← name.givenName,
// `lastName` ← name.familyName, `fullName` ← displayName (else name.formatted), `email` ← the
// primary email (else the first), and `deactivatedAt` ← `active: false`. The whole resource,
// `externalId` and the rest included, is kept round trip under `extra.scim`, with the times of its
// creation and last change. Reading back, the record wins over `extra.scim`: a change the
// Provisioning API (or the application) made to a documented field shows through SCIM too.
//
// A deactivated record is a SCIM user with `active: false` when `extra.scim.active` is false too;
// otherwise it is a deleted user whose row the store keeps (`onDelete: "deactivate"`), which SCIM
// answers 404 for.
import type { JsonValue } from "type-fest";
import type { UserRecord } from "../users/user-record.ts";
import type { UserExtraMatch } from "../users/user-store.ts";
import { type JsonObject, ownValue } from "./evaluate.ts";
import { plainObject, setOwn, withoutNeverReturned } from "./resource.ts";

/** The key of `UserRecord.extra` under which the SCIM resource is kept. */
export const scimExtraKey = "scim";

/** When the SCIM server created and last changed a user, as kept under `extra.scim.meta`. */
export interface ScimTimes {
  created?: string | undefined;
  lastModified?: string | undefined;
}

function keptResource(user: UserRecord): JsonObject | undefined {
  const kept =
    user.extra !== undefined && Object.hasOwn(user.extra, scimExtraKey)
      ? user.extra[scimExtraKey]
      : undefined;
  return typeof kept === "object" && kept !== null && !Array.isArray(kept)
    ? (kept as JsonObject)
    : undefined;
}

/**
 * The deactivated users SCIM serves (as `active: false`), for a store's page: those its
 * `active: false` deactivated, which {@link deletedForScim} tells from the deleted ones.
 */
export const inactiveForScim: UserExtraMatch = { extra: [scimExtraKey, "active"], value: false };

/** Whether SCIM reads this stored user as deleted: deactivated, and not by SCIM's `active: false`. */
export function deletedForScim(user: UserRecord): boolean {
  return user.deactivatedAt !== undefined && keptResource(user)?.active !== false;
}

/**
 * The SCIM resource of a stored user, without `id`, `schemas` and `meta`; and its times. The
 * resource is a new object, but its nested values may be `user`'s: read them, or change a copy
 * (applyPatch works on one). Copying them all here cost more than the rest of a served answer.
 */
export function resourceOf(user: UserRecord): { resource: JsonObject; times: ScimTimes } {
  const kept = keptResource(user);
  const resource = kept === undefined ? plainObject() : withoutNeverReturned({ ...kept });
  const meta = resource.meta as JsonObject | undefined;
  const times: ScimTimes = {
    created: typeof meta?.created === "string" ? meta.created : undefined,
    lastModified: typeof meta?.lastModified === "string" ? meta.lastModified : undefined,
  };
  delete resource.meta;
  overlay(resource, user);
  return { resource, times };
}

/**
 * Whether the store holds a userName for this user. A user the Provisioning API (or the
 * application) wrote without a username, or with a blank one, is served with its id as userName
 * (RFC 7643 §4.1.1 requires a non-empty one, and identity providers read it): a stable value that
 * is never written back as its username.
 */
export function hasUserName(user: UserRecord): boolean {
  return user.username !== undefined && user.username.trim() !== "";
}

/** Puts the record's documented fields and its deactivation over the kept resource. */
function overlay(resource: JsonObject, user: UserRecord): void {
  setOwn(resource, "userName", hasUserName(user) ? user.username : user.uuid);
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
    // The mapped email is gone from the record; one without a value (its `value` removed by a
    // PATCH) was never the record's email and keeps its other sub-attributes.
    if (at !== -1 && typeof ownValue(emails[at], "value") === "string") emails.splice(at, 1);
  } else if (at === -1) {
    emails.push({ value: user.email, type: "work", primary: true });
  } else {
    emails[at] = { ...emails[at], value: user.email };
  }
  if (emails.length > 0) resource.emails = emails;
  else delete resource.emails;
  resource.active = user.deactivatedAt === undefined;
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
 * The record that stores `resource` whole (for `UserStore.replace`): the mapped documented fields
 * set or cleared, `extra.scim` the resource, `deactivatedAt` from `active`. What SCIM does not map
 * is kept from `previous`: `userId`, the password fields, the other keys of `extra`. The record
 * takes `resource`'s nested values as they are: the caller gives `resource` up (each caller built
 * it for this write, by normalizeResource or applyPatch).
 */
export function recordOf(
  uuid: string,
  resource: JsonObject,
  times: ScimTimes,
  previous: UserRecord | undefined,
  now: string,
): UserRecord {
  const name = resource.name as JsonObject | undefined;
  const emails = Array.isArray(resource.emails) ? (resource.emails as JsonObject[]) : [];
  const at = mappedEmail(emails);
  const kept = { ...resource };
  // `active` left out (a PUT without it, `remove active`, `replace active null`) keeps the user's
  // state: only an explicit true reactivates and only false deactivates.
  const active =
    typeof resource.active === "boolean"
      ? resource.active
      : previous === undefined || previous.deactivatedAt === undefined;
  kept.active = active;
  const meta = plainObject();
  if (times.created !== undefined) meta.created = times.created;
  if (times.lastModified !== undefined) meta.lastModified = times.lastModified;
  kept.meta = meta;
  const record: UserRecord = { uuid };
  for (const field of ["userId", "passwordFormat", "password"] as const) {
    const value = previous?.[field];
    if (value !== undefined) record[field] = value;
  }
  if (previous !== undefined && !hasUserName(previous) && resource.userName === uuid) {
    // The id served as userName for want of one, given back unchanged (a PATCH that leaves
    // userName alone, Okta's PUT of the user it read): the store keeps what it held.
    if (previous.username !== undefined) record.username = previous.username;
    delete kept.userName;
  } else {
    setField(record, "username", resource.userName);
  }
  setField(record, "firstName", name?.givenName);
  setField(record, "lastName", name?.familyName);
  setField(record, "fullName", resource.displayName ?? name?.formatted);
  setField(record, "email", at === -1 ? undefined : ownValue(emails[at], "value"));
  const others = Object.entries(previous?.extra ?? {}).filter(([key]) => key !== scimExtraKey);
  record.extra = Object.fromEntries([...others, [scimExtraKey, kept as JsonValue]]);
  if (!active) record.deactivatedAt = previous?.deactivatedAt ?? now;
  return record;
}

function setField(
  record: UserRecord,
  field: "username" | "firstName" | "lastName" | "fullName" | "email",
  value: unknown,
): void {
  if (typeof value === "string") record[field] = value;
}

/** The record of a SCIM-deactivated user marked deleted: still deactivated, no longer SCIM's. */
export function deletedRecord(user: UserRecord): UserRecord {
  const kept = keptResource(user);
  const extra = Object.fromEntries(
    Object.entries(user.extra ?? {}).map(([key, value]) =>
      key === scimExtraKey && kept !== undefined
        ? [key, { ...kept, active: true } as JsonValue]
        : [key, value],
    ),
  );
  return { ...user, extra };
}
