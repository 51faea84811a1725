import type { JsonValue } from "type-fest";
import type * as z from "zod/mini";
import type { userRecordSchema } from "./user-record.ts";

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

/** One of the optional documented fields of a user record. */
export type UserFieldName = (typeof userFieldNames)[number];

/**
 * A user as the application stores it: the platform's nine documented fields in camelCase,
 * plus any undocumented fields the platform sent, kept under their wire names in `extra`:
 * `{ uuid: string; userId?: string; ...; email?: string; extra?: Record<string, JsonValue> }`.
 * Inferred from {@link userRecordSchema}, so the type and its runtime check cannot drift apart.
 */
export type UserRecord = z.infer<typeof userRecordSchema>;

/**
 * A change to merge into a stored user. A field that is absent keeps its stored value; a field set
 * to `null` is cleared. `extra` merges key by key with the same rule.
 */
export type UserPatch = { uuid: string } & { [Field in UserFieldName]?: string | null } & {
  extra?: Record<string, JsonValue | null>;
};

/** What {@link UserStore.upsert} reports. */
export interface UpsertResult {
  /** True when no user with this uuid existed before. */
  created: boolean;
  /** The stored user after the merge. */
  user: UserRecord;
}

/**
 * Where the Provisioning API keeps users. Implement it over any database.
 *
 * Several replicas of an application may receive the platform's calls, so each method must be
 * atomic in the store itself (one SQL statement or a transaction), not only within one process.
 * Check an implementation with `testUserStore` from `platform-integration/testing`.
 */
export interface UserStore {
  /** Atomically merges `patch` into the user with its uuid, creating the user when missing. */
  upsert(patch: UserPatch): Promise<UpsertResult>;
  /** Removes the user; resolves (with `deleted: false`) when there was none. */
  delete(uuid: string): Promise<{ deleted: boolean }>;
  /** Whether the store can take writes now; ping answers 503 while it is false. */
  ready?(): boolean | Promise<boolean>;
  /** Removes every user, before the platform's full re-sync (`POST /v1/reset`). */
  reset?(): Promise<void>;
}
