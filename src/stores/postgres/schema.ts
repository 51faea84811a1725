// The PostgreSQL store's schema: the users table, the quarantine's tables (brought up from an
// older version's one row per message) and the unique indexes that follow the `unique` option.
import type { PoolClient } from "pg";
import { composePatches } from "../../users/compose-patches.ts";
import type { PendingUser } from "../../users/quarantine-store.ts";
import { type UserFieldName, type UserPatch, userWireNames } from "../../users/user-record.ts";
import { quote, type StoreNames } from "./names.ts";
import { fields } from "./rows.ts";
import { indexedExtraSql } from "./whole-writes.ts";

/**
 * Creates what is missing and brings an older version's tables up to date, inside the caller's
 * transaction, which holds the table's advisory lock. Throws when the data already breaks a
 * unique field.
 */
export async function migrateTables(client: PoolClient, names: StoreNames): Promise<void> {
  await client.query(`CREATE TABLE IF NOT EXISTS ${names.table} (
    uuid text PRIMARY KEY,
    ${fields.map(([, column]) => `${column} text`).join(", ")},
    extra jsonb,
    deactivated_at text
  )`);
  await client.query(`ALTER TABLE ${names.table} ADD COLUMN IF NOT EXISTS deactivated_at text`);
  // findUsers' case-insensitive look-up of a username (SCIM's userName check on every create),
  // deactivated users included; its expression is the look-up's, so the planner uses it.
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${quote(`pi_username_lower_${names.indexSuffix}`)} ON ${names.table} (lower((username) COLLATE "C"))`,
  );
  // findUsers' exact look-up of the indexed extra path (SCIM's externalId, Entra's first call for
  // each user of every sync), spelled as the look-up spells it.
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${quote(`pi_extra_path_${names.indexSuffix}`)} ON ${names.table} (${indexedExtraSql})`,
  );
  await migrateQuarantine(client, names);
  const { rows } = await client.query<{ name: string; qualified: string }>(
    `SELECT c.relname AS name, i.indexrelid::regclass::text AS qualified
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = $1::regclass AND c.relname LIKE 'pi\\_unique\\_%'`,
    [names.table],
  );
  for (const { name, qualified } of rows) {
    if (!names.indexes.has(name)) await client.query(`DROP INDEX ${qualified}`);
  }
  for (const [name, field] of names.indexes) {
    const column = userWireNames[field];
    const key = field === "email" ? `(lower(${column} COLLATE "C"))` : column;
    try {
      await client.query(
        `CREATE UNIQUE INDEX IF NOT EXISTS ${quote(name)} ON ${names.table} (${key}) WHERE deactivated_at IS NULL AND ${column} IS NOT NULL`,
      );
    } catch (error) {
      throw new Error(
        `PostgresUserStore cannot make ${field} unique: two active users already share a value (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
}

/**
 * The quarantine's tables: one pending record per uuid and the index of the values each awaits.
 * An older version kept one row per message: those are merged into one record per uuid, in
 * order, awaiting nothing named (the uuid's next message or `retryQuarantined()` tries them).
 */
async function migrateQuarantine(client: PoolClient, names: StoreNames): Promise<void> {
  const { rows: old } = await client.query<{ old: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)
    AND attname = 'id' AND NOT attisdropped) AS old`,
    [names.quarantine],
  );
  let kept: EntryRow[] = [];
  if (old[0]?.old === true) {
    kept = (await client.query<EntryRow>(`SELECT * FROM ${names.quarantine} ORDER BY id`)).rows;
    await client.query(`DROP TABLE ${names.quarantine}`);
  }
  await client.query(`CREATE TABLE IF NOT EXISTS ${names.quarantine} (
    uuid text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    operation text NOT NULL,
    patch jsonb NOT NULL,
    reason text NOT NULL,
    fields jsonb NOT NULL,
    awaits jsonb NOT NULL,
    since timestamptz NOT NULL,
    attempts integer NOT NULL,
    messages integer NOT NULL
  )`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${names.awaits} (
    field text NOT NULL,
    value text NOT NULL,
    uuid text NOT NULL,
    PRIMARY KEY (field, value, uuid)
  )`);
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${quote(`pi_awaits_uuid_${names.indexSuffix}`)} ON ${names.awaits} (uuid)`,
  );
  const byUuid = new Map<string, EntryRow[]>();
  for (const row of kept) byUuid.set(row.uuid, [...(byUuid.get(row.uuid) ?? []), row]);
  for (const [uuid, rows] of byUuid) {
    const first = rows[0] as EntryRow;
    await client.query(
      `INSERT INTO ${names.quarantine} (uuid, operation, patch, reason, fields, awaits, since, attempts, messages)
      VALUES ($1, $2, $3, $4, '[]', '[]', $5, $6, $7)`,
      [
        uuid,
        first.operation,
        JSON.stringify(composePatches(rows.map((row) => row.patch))),
        first.reason,
        first.since,
        first.attempts,
        rows.length,
      ],
    );
  }
}

/** A row of the quarantine table of an older version: one kept message. */
type EntryRow = {
  id: string;
  uuid: string;
  operation: PendingUser["operation"];
  patch: UserPatch;
  reason: string;
  field: UserFieldName | null;
  since: Date;
  attempts: number;
};
