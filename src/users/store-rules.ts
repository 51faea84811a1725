// The options the bundled stores share for the rules a real application's users table has: unique
// fields, and a delete that deactivates rather than removes. One home, so that MemoryUserStore,
// SqliteUserStore and PostgresUserStore check and mean them the same way.
import { UserConflictError } from "./user-conflict-error.ts";

/** The fields a bundled store can hold unique: the documented ones but the password and its format. */
export const uniqueFieldNames = [
  "userId",
  "username",
  "firstName",
  "lastName",
  "fullName",
  "email",
] as const;

/** A field a bundled store can hold unique. */
export type UniqueField = (typeof uniqueFieldNames)[number];

/** What a delete does in a bundled store. */
export type OnDelete = "delete" | "deactivate";

/** The options MemoryUserStore, SqliteUserStore and PostgresUserStore share. */
export interface StoreRulesOptions {
  /**
   * Fields no two active users may share, as a unique index: an upsert that would give one to a
   * second user throws {@link UserConflictError} naming the field, and stores nothing. `email`
   * ignores the case of ASCII letters (A-Z); the others compare exactly. Users without the field
   * (or with it cleared) never conflict. A deactivated user (`onDelete: "deactivate"`) holds no
   * value: the directory deleted it and may give its email to someone else; re-created, it is
   * refused a value an active user took meanwhile, like any other user. Default: none.
   */
  unique?: readonly UniqueField[] | undefined;
  /**
   * `"delete"` removes the user's row. `"deactivate"` keeps it and sets `deactivatedAt` (an ISO
   * 8601 timestamp, in the record read back), for an application whose other tables point at its
   * users: `list()` and `count()` leave deactivated users out unless asked. A later create or
   * modify of the uuid creates the user again in the same row, from the record it carries alone,
   * as `"delete"` would: the fields and `extra` keys it omits are cleared, `deactivatedAt` too,
   * and the upsert reports `created: true` (so `onChange` says `created`). A delete of a
   * deactivated or missing user resolves `{ deleted: false }` (the API still answers 204).
   * Default `"delete"`.
   */
  onDelete?: OnDelete | undefined;
}

/** Checks the shared options once, at construction; a TypeError says what is wrong. */
export function storeRules(
  store: string,
  { unique = [], onDelete = "delete" }: StoreRulesOptions,
): { unique: UniqueField[]; onDelete: OnDelete } {
  if (!Array.isArray(unique)) {
    throw new TypeError(`${store}: unique must be an array of field names`);
  }
  for (const field of unique) {
    if (!(uniqueFieldNames as readonly string[]).includes(field)) {
      throw new TypeError(
        `${store}: unique cannot hold ${JSON.stringify(field)}; it takes ${uniqueFieldNames.join(", ")}`,
      );
    }
  }
  if (onDelete !== "delete" && onDelete !== "deactivate") {
    throw new TypeError(
      `${store}: onDelete must be "delete" or "deactivate", not ${String(onDelete)}`,
    );
  }
  return { unique: [...new Set(unique)], onDelete };
}

/**
 * The `extra` path the bundled SQL stores index for an exact `findUsers` look-up: SCIM's
 * `externalId` (`extra.scim.externalId`), by which Entra ID finds each user on every sync. Any
 * other path is read through the whole table.
 */
export const indexedExtraPath = ["scim", "externalId"] as const;

/** The value a unique index compares: email with its ASCII letters in lower case, others as is. */
export function uniqueValue(field: UniqueField, value: string): string {
  return field === "email" ? asciiLowerCase(value) : value;
}

const asciiUpper = /[A-Z]/;

/**
 * `value` with its ASCII letters (A-Z) in lower case and nothing else changed: the one case rule
 * of the stores (the unique email, `findUsers` with `ignoreCase`) and of SCIM's case-insensitive
 * comparisons, the same in JavaScript, SQLite's lower() and PostgreSQL's lower() under "C".
 */
export function asciiLowerCase(value: string): string {
  // Most names are lower case already: a test is cheaper than a replace that changes nothing.
  return asciiUpper.test(value)
    ? value.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
    : value;
}

/** The error a bundled store throws when a unique value is held by another user. */
export function uniqueConflict(field: UniqueField, cause?: unknown): UserConflictError {
  return new UserConflictError(`the ${field} is already held by another user`, { field, cause });
}

/**
 * A bundled store's read as a promise (a synchronous failure rejects it), made to throw when
 * serialized: `res.json(store.list())` without `await` would otherwise send `{}`, the JSON of a
 * promise, silently. The TypeError names the fix; awaiting the promise is unchanged.
 */
export function awaitedRead<T>(call: string, read: () => T | Promise<T>): Promise<T> {
  const promise = (async () => read())();
  Object.defineProperty(promise, "toJSON", {
    value() {
      throw new TypeError(
        `${call} returns a promise: await it before serializing it (res.json(await ${call}))`,
      );
    },
  });
  return promise;
}

/**
 * Whether a string can be stored as sent in every bundled store (any UTF-8 database): no lone
 * UTF-16 surrogate (PostgreSQL's jsonb refuses one, SQLite turns it into U+FFFD) and no U+0000
 * (PostgreSQL refuses it, node:sqlite reads text back cut short at it). The one rule the
 * Provisioning API's and the SCIM server's wire checks apply.
 */
export function storableText(text: string): boolean {
  // isWellFormed is ES2024 (Node 20+, Bun, Deno); the compiler's lib stops at ES2023.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed() && !text.includes("\0");
}
