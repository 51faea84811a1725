// The PostgreSQL store's rows: the users table's columns, the merge and reactivation statements
// bound to a patch as jsonb, and rows read back as records (a user, a pending record).
import type { AwaitedValue, PendingUser } from "../../users/quarantine-store.ts";
import {
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  userFieldNames,
  userWireNames,
} from "../../users/user-record.ts";

export type Row = { [column: string]: unknown; created?: boolean };

/** userId → user_id: the documented fields keep their wire names as columns. */
export const fields = userFieldNames.map((field) => [field, userWireNames[field]] as const);
export const columns = `uuid, ${fields.map(([, column]) => column).join(", ")}, extra, deactivated_at`;

// The merge in one statement, bound to the patch as jsonb ($1): a field whose key is absent keeps
// its column (`?` tests the key), a JSON null clears it. `extra` merges key by key at the top
// level: the stored object minus every key the patch names, then the patch's non-null values.
// (jsonb_strip_nulls would also strip nulls nested inside values, which must stay.)
// `xmax = 0` holds only for a row this statement inserted. A deactivated row is left alone
// (the WHERE): no row comes back, and reactivateStatement writes it.
export function upsertStatement(table: string): string {
  return `INSERT INTO ${table} AS stored (${columns})
VALUES (
  $1::jsonb ->> 'uuid',
  ${fields.map(([field]) => `$1::jsonb ->> '${field}'`).join(",\n  ")},
  (SELECT jsonb_object_agg(key, value) FROM jsonb_each($1::jsonb -> 'extra')
    WHERE jsonb_typeof(value) <> 'null'),
  NULL
)
ON CONFLICT (uuid) DO UPDATE SET
  ${fields
    .map(
      ([field, column]) =>
        `${column} = CASE WHEN $1::jsonb ? '${field}' THEN excluded.${column} ELSE stored.${column} END`,
    )
    .join(",\n  ")},
  extra = nullif(
    (coalesce(stored.extra, '{}')
      - ARRAY(SELECT jsonb_object_keys(coalesce($1::jsonb -> 'extra', '{}'))))
    || coalesce(excluded.extra, '{}'),
    '{}'),
  deactivated_at = NULL
WHERE stored.deactivated_at IS NULL
RETURNING ${columns}, xmax = 0 AS created`;
}

// A deactivated user is one the directory deleted: a write of its uuid stores the record it
// carries, as an insert would (the fields it omits cleared, `extra` its own alone), and reports a
// creation. Bound to the patch as jsonb ($1), as the upsert is.
export function reactivateStatement(table: string): string {
  return `UPDATE ${table} SET
  ${fields.map(([field, column]) => `${column} = $1::jsonb ->> '${field}'`).join(",\n  ")},
  extra = (SELECT jsonb_object_agg(key, value) FROM jsonb_each($1::jsonb -> 'extra')
    WHERE jsonb_typeof(value) <> 'null'),
  deactivated_at = NULL
WHERE uuid = $1::jsonb ->> 'uuid' AND deactivated_at IS NOT NULL
RETURNING ${columns}, true AS created`;
}

export function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const [field, column] of fields) {
    if (row[column] !== null) user[field] = row[column];
  }
  // pg parses jsonb with JSON.parse, which keeps a `__proto__` key as a plain own property.
  if (row.extra !== null) user.extra = row.extra;
  if (typeof row.deactivated_at === "string") user.deactivatedAt = row.deactivated_at;
  return user as unknown as UserRecord;
}

export type PendingRow = {
  uuid: string;
  operation: PendingUser["operation"];
  patch: UserPatch;
  reason: string;
  fields: UserFieldName[];
  awaits: AwaitedValue[];
  since: Date;
  attempts: number;
  messages: number;
};

export function toPending(row: PendingRow): PendingUser {
  return {
    uuid: row.uuid,
    operation: row.operation,
    patch: row.patch,
    reason: row.reason,
    fields: row.fields,
    awaits: row.awaits,
    since: new Date(row.since).toISOString(),
    attempts: row.attempts,
    messages: row.messages,
  };
}
