// A UserStore on PostgreSQL through a pool the application passes in. Only pg's types are
// imported: any pool with pg's `query` and `connect` works, and this module loads without pg.
import type { Pool, PoolClient } from "pg";
import { composePatches } from "../../provisioning/compose-patches.ts";
import {
  type QuarantinedEntry,
  type QuarantineEntry,
  type QuarantineMethods,
  type ReleaseOutcome,
  type StoreRulesOptions,
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserReadOptions,
  type UserRecord,
  type UserStore,
  type UserStoreReads,
  userFieldNames,
} from "../../provisioning/index.ts";
import {
  awaitedRead,
  type OnDelete,
  storeRules,
  type UniqueField,
  uniqueConflict,
} from "../../provisioning/store-rules.ts";
import { isUserConflict, type UserConflictError } from "../../provisioning/user-conflict-error.ts";
import { wireFieldNames } from "../../provisioning/wire.ts";

/** Options of {@link PostgresUserStore}; `unique` and `onDelete` as for every bundled store. */
export interface PostgresUserStoreOptions extends StoreRulesOptions {
  /** The application's `pg.Pool`. The store never ends it: the application does, at shutdown. */
  pool: Pool;
  /**
   * The table's name, quoted as one SQL identifier (any characters, case kept): default
   * `provisioned_users`. {@link PostgresUserStore.migrate} creates it.
   */
  table?: string | undefined;
  /** The table's schema; default: the first schema of the connection's `search_path`. */
  schema?: string | undefined;
  /**
   * The table of the quarantine's kept messages, in the same schema: default the users table's
   * name with `_quarantine` appended (or `pi_quarantine_` and a hash of it, past 63 bytes).
   */
  quarantineTable?: string | undefined;
}

type Row = { [column: string]: unknown; created?: boolean };

/** userId → user_id: the documented fields keep their wire names as columns. */
const fields = userFieldNames.map((field) => [field, wireFieldNames[field]] as const);
const columns = `uuid, ${fields.map(([, column]) => column).join(", ")}, extra, deactivated_at`;

/**
 * A {@link UserStore} in PostgreSQL, through the application's `pg.Pool` (`pg` is an optional
 * peer dependency). Users live in one table: a text column per documented field and a `jsonb`
 * column for `extra`. Call {@link migrate} once at startup to create the table.
 *
 * Every upsert is one `INSERT ... ON CONFLICT DO UPDATE` statement: several replicas of the
 * application can receive the platform's calls at once, PostgreSQL locks the row, and no update
 * is lost. PostgreSQL text cannot hold the character U+0000; a field that contains it fails the
 * upsert (the platform then retries it, and the sync stays paused).
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { PostgresUserStore } from "platform-integration/postgres";
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = new PostgresUserStore({ pool });
 * await store.migrate();
 * const handler = createProvisioningHandler({ store });
 * ```
 */
export class PostgresUserStore implements UserStore, UserStoreReads, QuarantineMethods {
  readonly #pool: Pool;
  readonly #table: string;
  readonly #quarantine: string;
  readonly #lockKey: string;
  readonly #upsert: string;
  readonly #reactivate: string;
  readonly #onDelete: OnDelete;
  readonly #unique: UniqueField[];
  /** The unique indexes' names (unquoted), each with its field. */
  readonly #indexes: Map<string, UniqueField>;
  readonly #indexSuffix: string;

  constructor(options: PostgresUserStoreOptions) {
    const { pool, table = "provisioned_users", schema } = options;
    const rules = storeRules("PostgresUserStore", options);
    this.#pool = pool;
    this.#onDelete = rules.onDelete;
    this.#unique = rules.unique;
    const inSchema = (name: string) =>
      schema === undefined ? quote(name) : `${quote(schema)}.${quote(name)}`;
    this.#table = inSchema(table);
    const hash = fnv1a(this.#table);
    const quarantine =
      options.quarantineTable ??
      (byteLength(`${table}_quarantine`) <= 63 ? `${table}_quarantine` : `pi_quarantine_${hash}`);
    this.#quarantine = inSchema(quarantine);
    this.#indexSuffix = hash;
    this.#indexes = new Map(
      this.#unique.map((field) => [`pi_unique_${wireFieldNames[field]}_${hash}`, field]),
    );
    this.#lockKey = `platform-integration:${this.#table}`;
    this.#upsert = upsertStatement(this.#table);
    this.#reactivate = reactivateStatement(this.#table);
  }

  /**
   * Creates the tables when they are missing (and the deactivated_at column of an older one),
   * and makes the unique indexes match the `unique` option: one partial index per field, over
   * active users that have it, dropping those no longer asked for. Replicas that start together
   * may all call it: an advisory lock makes them take turns, since concurrent CREATE TABLE IF
   * NOT EXISTS can fail. It throws when the data already breaks a unique field.
   */
  async migrate(): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [this.#lockKey]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.#table} (
        uuid text PRIMARY KEY,
        ${fields.map(([, column]) => `${column} text`).join(", ")},
        extra jsonb,
        deactivated_at text
      )`);
      await client.query(`ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS deactivated_at text`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.#quarantine} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        uuid text NOT NULL,
        operation text NOT NULL,
        patch jsonb NOT NULL,
        reason text NOT NULL,
        field text,
        since timestamptz NOT NULL DEFAULT now(),
        attempts integer NOT NULL DEFAULT 1
      )`);
      await client.query(
        `CREATE INDEX IF NOT EXISTS ${quote(`pi_quarantine_uuid_${this.#indexSuffix}`)} ON ${this.#quarantine} (uuid, id)`,
      );
      const { rows } = await client.query<{ name: string; qualified: string }>(
        `SELECT c.relname AS name, i.indexrelid::regclass::text AS qualified
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = $1::regclass AND c.relname LIKE 'pi\\_unique\\_%'`,
        [this.#table],
      );
      for (const { name, qualified } of rows) {
        if (!this.#indexes.has(name)) await client.query(`DROP INDEX ${qualified}`);
      }
      for (const [name, field] of this.#indexes) {
        const column = wireFieldNames[field];
        const key = field === "email" ? `(lower(${column} COLLATE "C"))` : column;
        try {
          await client.query(
            `CREATE UNIQUE INDEX IF NOT EXISTS ${quote(name)} ON ${this.#table} (${key}) WHERE deactivated_at IS NULL AND ${column} IS NOT NULL`,
          );
        } catch (error) {
          throw new Error(
            `PostgresUserStore cannot make ${field} unique: two active users already share a value (${(error as Error).message})`,
            { cause: error },
          );
        }
      }
    });
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    return this.#upsertOn(this.#pool, patch);
  }

  async #upsertOn(client: Pool | PoolClient, patch: UserPatch): Promise<UpsertResult> {
    const parameters = [JSON.stringify(patch)];
    try {
      // The upsert leaves a deactivated row alone (and returns nothing); the reactivation then
      // writes over it, and finds nothing only when another replica wrote the uuid in between:
      // then the upsert runs again. Three rounds of that race in a row is a fault, reported.
      for (let attempt = 0; attempt < 3; attempt++) {
        const { rows } = await client.query<Row>(this.#upsert, parameters);
        const row = rows[0] ?? (await client.query<Row>(this.#reactivate, parameters)).rows[0];
        if (row !== undefined) return { created: row.created === true, user: toUser(row) };
      }
    } catch (error) {
      throw this.#conflictOf(error) ?? error;
    }
    throw new Error(
      `PostgresUserStore could not write ${patch.uuid}: its row changed between each upsert and reactivation`,
    );
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    const { rowCount } =
      this.#onDelete === "delete"
        ? await this.#pool.query(`DELETE FROM ${this.#table} WHERE uuid = $1`, [uuid])
        : await this.#pool.query(
            `UPDATE ${this.#table} SET deactivated_at = $2 WHERE uuid = $1 AND deactivated_at IS NULL`,
            [uuid, new Date().toISOString()],
          );
    return { deleted: (rowCount ?? 0) > 0 };
  }

  /** The stored user with this uuid (a deactivated one too), or undefined. */
  get(uuid: string): Promise<UserRecord | undefined> {
    return awaitedRead("store.get(uuid)", async () => {
      const { rows } = await this.#pool.query<Row>(
        `SELECT ${columns} FROM ${this.#table} WHERE uuid = $1`,
        [uuid],
      );
      return rows[0] && toUser(rows[0]);
    });
  }

  /** Every stored user, ordered by uuid; deactivated ones only when asked. */
  list({ includeDeactivated = false }: UserReadOptions = {}): Promise<UserRecord[]> {
    return awaitedRead("store.list()", async () => {
      const { rows } = await this.#pool.query<Row>(
        `SELECT ${columns} FROM ${this.#table}${includeDeactivated ? "" : " WHERE deactivated_at IS NULL"} ORDER BY uuid`,
      );
      return rows.map(toUser);
    });
  }

  /** How many users the table holds now; deactivated ones only when asked. */
  count({ includeDeactivated = false }: UserReadOptions = {}): Promise<number> {
    return awaitedRead("store.count()", async () => {
      const { rows } = await this.#pool.query<{ users: number }>(
        `SELECT count(*)::int AS users FROM ${this.#table}${includeDeactivated ? "" : " WHERE deactivated_at IS NULL"}`,
      );
      return (rows[0] as { users: number }).users;
    });
  }

  /** True when the database answers and the table exists (false before {@link migrate}). */
  async ready(): Promise<boolean> {
    try {
      await this.#pool.query(`SELECT 1 FROM ${this.#table} LIMIT 1`);
      return true;
    } catch {
      return false;
    }
  }

  /** Removes every user and every kept message: the re-sync that follows supersedes them. */
  async reset(): Promise<void> {
    await this.#pool.query(`TRUNCATE ${this.#table}, ${this.#quarantine}`);
  }

  async keepQuarantined(entry: QuarantineEntry): Promise<QuarantinedEntry> {
    let kept: QuarantinedEntry | undefined;
    await this.#transaction(async (client) => {
      const { rows } = await client.query<EntryRow>(
        `INSERT INTO ${this.#quarantine} (uuid, operation, patch, reason, field)
        VALUES ($1, $2, $3, $4, $5) RETURNING *`,
        [
          entry.uuid,
          entry.operation,
          JSON.stringify(entry.patch),
          entry.reason,
          entry.field ?? null,
        ],
      );
      await this.#vacate(client, entry.uuid, entry.field);
      kept = toEntry(rows[0] as EntryRow);
    });
    return kept as QuarantinedEntry;
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<QuarantinedEntry[]> {
    const { rows } =
      uuid === undefined
        ? await this.#pool.query<EntryRow>(`SELECT * FROM ${this.#quarantine} ORDER BY id`)
        : await this.#pool.query<EntryRow>(
            `SELECT * FROM ${this.#quarantine} WHERE uuid = $1 ORDER BY id`,
            [uuid],
          );
    return rows.map(toEntry);
  }

  /**
   * One transaction under an advisory lock on the uuid, which a replica releasing it already
   * holds (then this one answers `none` and leaves the uuid to it): the kept messages of the
   * uuid, their composed upsert and their removal, or a counted attempt.
   */
  async releaseQuarantined(uuid: string): Promise<ReleaseOutcome> {
    let outcome: ReleaseOutcome = { outcome: "none" };
    await this.#transaction(async (client) => {
      const { rows: locked } = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS locked",
        [this.#lockKey, uuid],
      );
      if (locked[0]?.locked !== true) return;
      const { rows } = await client.query<EntryRow>(
        `SELECT * FROM ${this.#quarantine} WHERE uuid = $1 ORDER BY id FOR UPDATE`,
        [uuid],
      );
      const entries = rows.map(toEntry);
      const oldest = entries[0];
      if (oldest === undefined) return;
      await client.query("SAVEPOINT release");
      let result: UpsertResult;
      try {
        result = await this.#upsertOn(client, composePatches(entries.map((entry) => entry.patch)));
      } catch (error) {
        if (!isUserConflict(error)) throw error;
        await client.query("ROLLBACK TO SAVEPOINT release");
        const { rows: retried } = await client.query<EntryRow>(
          `UPDATE ${this.#quarantine} SET attempts = attempts + 1, reason = $2, field = $3
          WHERE id = $1 RETURNING *`,
          [oldest.id, error.message, error.field ?? null],
        );
        await this.#vacate(client, uuid, error.field);
        outcome = { outcome: "kept", entry: toEntry(retried[0] as EntryRow), conflict: error };
        return;
      }
      await client.query(`DELETE FROM ${this.#quarantine} WHERE uuid = $1`, [uuid]);
      outcome = { outcome: "released", entries, result };
    });
    return outcome;
  }

  async discardQuarantined(uuid: string): Promise<number> {
    const { rowCount } = await this.#pool.query(`DELETE FROM ${this.#quarantine} WHERE uuid = $1`, [
      uuid,
    ]);
    return rowCount ?? 0;
  }

  /** Clears the field of a user whose new value for it was refused (see keepQuarantined). */
  async #vacate(client: PoolClient, uuid: string, field: UserFieldName | undefined): Promise<void> {
    if (field === undefined) return;
    const column = wireFieldNames[field];
    await client.query(
      `UPDATE ${this.#table} SET ${column} = NULL WHERE uuid = $1 AND ${column} IS NOT NULL`,
      [uuid],
    );
  }

  /** A unique index's violation (23505 naming one of this store's indexes) as a conflict. */
  #conflictOf(error: unknown): UserConflictError | undefined {
    const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
    if (code !== "23505" || typeof constraint !== "string") return;
    const field = this.#indexes.get(constraint);
    return field === undefined ? undefined : uniqueConflict(field, error);
  }

  async #transaction(body: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      await body(client);
      await client.query("COMMIT");
      client.release();
    } catch (error) {
      // A connection in an unknown state is closed rather than handed back to the pool.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }
}

type EntryRow = {
  id: string;
  uuid: string;
  operation: QuarantinedEntry["operation"];
  patch: UserPatch;
  reason: string;
  field: UserFieldName | null;
  since: Date;
  attempts: number;
};

function toEntry(row: EntryRow): QuarantinedEntry {
  return {
    id: String(row.id),
    uuid: row.uuid,
    operation: row.operation,
    patch: row.patch,
    reason: row.reason,
    ...(row.field === null ? {} : { field: row.field }),
    since: new Date(row.since).toISOString(),
    attempts: row.attempts,
  };
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** A short, stable name part for a table: FNV-1a over its quoted name, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * `name` as one SQL identifier: in double quotes, each double quote doubled. PostgreSQL cuts
 * names at 63 bytes without a word, so a longer one, which could name another table, is refused.
 */
function quote(name: string): string {
  if (name === "" || name.includes("\0") || new TextEncoder().encode(name).length > 63) {
    throw new TypeError(
      `A table or schema name must be 1 to 63 bytes of UTF-8 without U+0000, not ${JSON.stringify(name)}`,
    );
  }
  return `"${name.replaceAll('"', '""')}"`;
}

// The merge in one statement, bound to the patch as jsonb ($1): a field whose key is absent keeps
// its column (`?` tests the key), a JSON null clears it. `extra` merges key by key at the top
// level: the stored object minus every key the patch names, then the patch's non-null values.
// (jsonb_strip_nulls would also strip nulls nested inside values, which must stay.)
// `xmax = 0` holds only for a row this statement inserted. A deactivated row is left alone
// (the WHERE): no row comes back, and reactivateStatement writes it.
function upsertStatement(table: string): string {
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
function reactivateStatement(table: string): string {
  return `UPDATE ${table} SET
  ${fields.map(([field, column]) => `${column} = $1::jsonb ->> '${field}'`).join(",\n  ")},
  extra = (SELECT jsonb_object_agg(key, value) FROM jsonb_each($1::jsonb -> 'extra')
    WHERE jsonb_typeof(value) <> 'null'),
  deactivated_at = NULL
WHERE uuid = $1::jsonb ->> 'uuid' AND deactivated_at IS NOT NULL
RETURNING ${columns}, true AS created`;
}

function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const [field, column] of fields) {
    if (row[column] !== null) user[field] = row[column];
  }
  // pg parses jsonb with JSON.parse, which keeps a `__proto__` key as a plain own property.
  if (row.extra !== null) user.extra = row.extra;
  if (typeof row.deactivated_at === "string") user.deactivatedAt = row.deactivated_at;
  return user as unknown as UserRecord;
}
