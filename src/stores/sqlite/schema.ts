// The SQLite store's schema: its tables and columns, the set-up of a file (created, or brought up
// from an older version) and the unique indexes that follow the `unique` option.
import type { DatabaseSync } from "node:sqlite";
import { composePatches } from "../../users/compose-patches.ts";
import { indexedExtraPath, type UniqueField } from "../../users/store-rules.ts";
import { userFieldNames, userWireNames } from "../../users/user-record.ts";

// The SQL column of each documented field: its wire name (userId → user_id).
export const fields = userFieldNames.map((field) => [field, userWireNames[field]] as const);

export const table = "provisioned_users";
export const quarantineTable = "provisioned_users_quarantine";
export const awaitsTable = "provisioned_users_quarantine_awaits";
export const uniqueIndexPrefix = `${table}_unique_`;

/**
 * The JSON path of one key of `extra`, a quoted label (`$."scim"`), as findUsers binds it: no key
 * can then read as path syntax.
 */
export function extraKeyPath(key: string): string {
  return `$.${JSON.stringify(key)}`;
}

/**
 * The expression of the indexed `extra` path (indexedExtraPath, SCIM's externalId), its keys
 * written into the SQL: an expression index serves only a query that spells it the same, which a
 * path bound as a parameter never does. The keys are this package's constants, with no quote.
 */
export const indexedExtraSql = `extra -> '${extraKeyPath(indexedExtraPath[0])}' ->> '${extraKeyPath(indexedExtraPath[1])}'`;

// The index on lower(username) serves findUsers' case-insensitive look-up of a username (the SCIM
// server's userName check on every create), which would otherwise read the whole table; it takes
// deactivated users in, as findUsers does; the one on the indexed extra path serves its exact
// look-up of SCIM's externalId (Entra's first call for each user of every sync).
// `revision` counts the writes to a row since the user was created: 1 right after the insert or
// the reactivation of a deactivated row, which is how one statement reports whether it created
// the user.
const usersTableSql = `CREATE TABLE IF NOT EXISTS ${table} (
  uuid TEXT PRIMARY KEY NOT NULL,
  ${fields.map(([, column]) => `${column} TEXT`).join(",\n  ")},
  extra TEXT,
  revision INTEGER NOT NULL DEFAULT 1,
  deactivated_at TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS ${table}_username_lower ON ${table} (lower(username));
CREATE INDEX IF NOT EXISTS ${table}_extra_path ON ${table} (${indexedExtraSql})`;

// The quarantine: one pending record per uuid (the merge of its kept messages, as JSON text), in
// the order they were first kept (rowid), and the index of the values each one awaits, which a
// step that frees a value reads to find whom it wakes.
const quarantineTablesSql = `CREATE TABLE IF NOT EXISTS ${quarantineTable} (
  uuid TEXT PRIMARY KEY NOT NULL,
  operation TEXT NOT NULL,
  patch TEXT NOT NULL,
  reason TEXT NOT NULL,
  fields TEXT NOT NULL,
  awaits TEXT NOT NULL,
  since TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  messages INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS ${awaitsTable} (
  field TEXT NOT NULL,
  value TEXT NOT NULL,
  uuid TEXT NOT NULL,
  PRIMARY KEY (field, value, uuid)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${awaitsTable}_uuid ON ${awaitsTable} (uuid)`;

/** A row as node:sqlite reads it. */
export type Row = Record<string, string | number | null>;

/**
 * Creates the tables of a new file, or brings those of an older version up to date. Inside the
 * caller's write transaction, so that the format is read under the lock that writes it.
 */
export function setUpSchema(db: DatabaseSync, unique: readonly UniqueField[]): void {
  db.exec(usersTableSql);
  migrate(db, unique);
}

/**
 * Brings a file of an older version up to date (the deactivated_at column), creates the
 * quarantine table, and makes the unique indexes match the `unique` option: one partial
 * index per field, over active users that have it, dropping those no longer asked for.
 */
function migrate(db: DatabaseSync, unique: readonly UniqueField[]): void {
  const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Row[];
  if (!columns.some((column) => column.name === "deactivated_at")) {
    db.exec(`ALTER TABLE ${table} ADD COLUMN deactivated_at TEXT`);
  }
  migrateQuarantine(db);
  const wanted = new Map<string, string>(
    unique.map((field) => {
      const column = userWireNames[field];
      const key = field === "email" ? `lower(${column})` : column;
      const sql = `CREATE UNIQUE INDEX IF NOT EXISTS ${uniqueIndexPrefix}${column} ON ${table} (${key}) WHERE deactivated_at IS NULL AND ${column} IS NOT NULL`;
      return [`${uniqueIndexPrefix}${column}`, sql] as const;
    }),
  );
  const existing = db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?")
    .all(table) as Row[];
  for (const { name } of existing) {
    if (typeof name === "string" && name.startsWith(uniqueIndexPrefix) && !wanted.has(name)) {
      db.exec(`DROP INDEX ${name}`);
    }
  }
  for (const [name, sql] of wanted) {
    try {
      db.exec(sql);
    } catch (error) {
      throw new Error(
        `SqliteUserStore cannot make ${name.slice(uniqueIndexPrefix.length)} unique: two active users already share a value (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
}

/**
 * Creates the quarantine's tables; a file of an older version kept one row per message: those
 * are merged into one pending record per uuid, in order, awaiting nothing named (the uuid's next
 * message or `retryQuarantined()` tries them). Inside the caller's write transaction.
 */
function migrateQuarantine(db: DatabaseSync): void {
  const columns = db.prepare(`PRAGMA table_info(${quarantineTable})`).all() as Row[];
  if (!columns.some((column) => column.name === "id")) {
    db.exec(quarantineTablesSql);
    return;
  }
  const rows = db.prepare(`SELECT * FROM ${quarantineTable} ORDER BY id`).all() as Row[];
  db.exec(`DROP TABLE ${quarantineTable}`);
  db.exec(quarantineTablesSql);
  const byUuid = new Map<string, Row[]>();
  for (const row of rows) {
    const uuid = row.uuid as string;
    byUuid.set(uuid, [...(byUuid.get(uuid) ?? []), row]);
  }
  const insert = db.prepare(
    `INSERT INTO ${quarantineTable} (operation, patch, reason, fields, awaits, since, attempts, messages, uuid)
    VALUES (?, ?, ?, '[]', '[]', ?, ?, ?, ?)`,
  );
  for (const [uuid, kept] of byUuid) {
    const first = kept[0] as Row;
    const patch = composePatches(kept.map((row) => JSON.parse(row.patch as string)));
    insert.run(
      first.operation as string,
      JSON.stringify(patch),
      first.reason as string,
      first.since as string,
      Number(first.attempts),
      kept.length,
      uuid,
    );
  }
}

/** How long a statement waits for another connection's lock, and the set-up for a busy file. */
export const busyTimeoutMs = 5000;

/**
 * Runs `setUp` again while it fails with SQLITE_BUSY, pausing a few milliseconds between tries,
 * until {@link busyTimeoutMs} has passed; then, or on any other error, throws that error.
 */
export function whileBusy(setUp: () => void): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      setUp();
      return;
    } catch (error) {
      const code = (error as { errcode?: unknown }).errcode;
      if (typeof code !== "number" || (code & 0xff) !== sqliteBusy || Date.now() >= deadline) {
        throw error;
      }
      // Synchronous, as the constructor is: the other replica's switch takes milliseconds.
      Atomics.wait(pause, 0, 0, Math.min(attempt, 20));
    }
  }
}

/** SQLite's primary result code for a lock another connection holds (extended codes add bits). */
const sqliteBusy = 5;
