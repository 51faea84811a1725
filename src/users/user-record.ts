// The user record: the base every other part of the users room (the store contract, the stores,
// the quarantine) and each protocol over it (the Provisioning API's wire form) builds on.
import type { JsonValue } from "type-fest";
import { wireNamesOf } from "../internal/wire-names.ts";

/** The eight optional documented fields of a user record, in their TypeScript (camelCase) names. */
export const userFieldNames = [
  "userId",
  "username",
  "firstName",
  "lastName",
  "fullName",
  "passwordFormat",
  "password",
  "email",
] as const;

/**
 * Each documented field's snake_case name (`firstName` → `first_name`), by the naming rule of the
 * Integration API's records: the Provisioning API's wire names, and the bundled stores' columns.
 */
export const userWireNames = wireNamesOf(userFieldNames);

/** One of the optional documented fields of a user record. */
export type UserFieldName = (typeof userFieldNames)[number];

/**
 * A user as the application stores it: the platform's nine documented fields in camelCase, plus
 * any undocumented fields the platform sent, kept under their wire names in `extra`. Its runtime
 * check is `userRecordSchema`, pinned to this interface by a type test.
 */
export interface UserRecord {
  /** The permanent identifier: a username may change, the uuid never does. */
  uuid: string;
  /** `user_id` on the wire, when the directory defines one. */
  userId?: string;
  /** As defined by the release's `ldap_username_field` (`uid`, `sAMAccountName`). */
  username?: string;
  firstName?: string;
  lastName?: string;
  fullName?: string;
  /** How `password` is encoded or hashed; the platform documents no values. */
  passwordFormat?: string;
  /** Sent by platforms before 2018 only; users log in through the Identity API since. */
  password?: string;
  email?: string;
  /** Fields outside the documented nine, under their wire names. */
  extra?: Record<string, JsonValue>;
  /**
   * Set by a store with `onDelete: "deactivate"` when the platform deleted the user (ISO 8601):
   * the row stays, for the tables that point at it. Never sent by the platform; a later create or
   * modify clears it.
   */
  deactivatedAt?: string;
}

/**
 * A change to merge into a stored user. A field that is absent keeps its stored value; a field set
 * to `null` is cleared. `extra` merges key by key with the same rule.
 */
export type UserPatch = { uuid: string } & { [Field in UserFieldName]?: string | null } & {
  extra?: Record<string, JsonValue | null>;
};

/** What `UserStore.upsert` reports. */
export interface UpsertResult {
  /** True when no user with this uuid existed before. */
  created: boolean;
  /** The stored user after the merge. */
  user: UserRecord;
}
