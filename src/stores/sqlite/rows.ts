// Rows of the SQLite store read back as records (a user, a pending record), and its unique
// indexes' violations read back as UserConflictErrors.
import type { PendingUser } from "../../users/quarantine-store.ts";
import { type UniqueField, uniqueConflict } from "../../users/store-rules.ts";
import type { UserConflictError } from "../../users/user-conflict-error.ts";
import type { UserRecord } from "../../users/user-record.ts";
import { fields, type Row, table, uniqueIndexPrefix } from "./schema.ts";

// node:sqlite reads text up to its first U+0000: a value holding one would come back cut short.
// (`extra` is JSON text, where it is written \u0000.) The handler refuses such values with a 400.
export function nulRefused(field: string): string {
  return `SqliteUserStore cannot store a ${field} containing U+0000: node:sqlite would read it back cut short`;
}

/** The user in a row: the stored one, or the one an insert stored (only the columns it set). */
export function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const [field, column] of fields) {
    if (typeof row[column] === "string") user[field] = row[column];
  }
  // JSON.parse keeps a `__proto__` key as a plain own property.
  if (typeof row.extra === "string") user.extra = JSON.parse(row.extra);
  if (typeof row.deactivated_at === "string") user.deactivatedAt = row.deactivated_at;
  return user as unknown as UserRecord;
}

export function toPending(row: Row): PendingUser {
  return {
    uuid: row.uuid as string,
    operation: row.operation as PendingUser["operation"],
    patch: JSON.parse(row.patch as string),
    reason: row.reason as string,
    fields: JSON.parse(row.fields as string),
    awaits: JSON.parse(row.awaits as string),
    since: row.since as string,
    attempts: Number(row.attempts),
    messages: Number(row.messages),
  };
}

const columnFields = new Map(fields.map(([field, column]) => [column, field]));

/**
 * A unique index's violation as a UserConflictError naming the field: node:sqlite reports it as
 * SQLITE_CONSTRAINT_UNIQUE (2067), naming the index or its column in the message.
 */
export function conflictOf(error: unknown): UserConflictError | undefined {
  if (!(error instanceof Error) || (error as { errcode?: unknown }).errcode !== 2067) return;
  // An index on an expression (email's lower()) is named; one on a column names the column.
  const index = new RegExp(`(?:${uniqueIndexPrefix}|${table}\\.)(\\w+)`).exec(error.message)?.[1];
  const field = index === undefined ? undefined : columnFields.get(index);
  if (field === undefined) return;
  return uniqueConflict(field as UniqueField, error);
}
