// A UserStore on PostgreSQL through a pool the application passes in. Only pg's types are
// imported: any pool with pg's `query` and `connect` works, and this module loads without pg.
import type { Pool, PoolClient } from "pg";
import {
  type UpsertResult,
  type UserPatch,
  type UserRecord,
  type UserStore,
  userFieldNames,
} from "../../provisioning/index.ts";
import { wireFieldNames } from "../../provisioning/wire.ts";

/** Options of {@link PostgresUserStore}. */
export interface PostgresUserStoreOptions {
  /** The application's `pg.Pool`. The store never ends it: the application does, at shutdown. */
  pool: Pool;
  /**
   * The table's name, quoted as one SQL identifier (any characters, case kept): default
   * `provisioned_users`. {@link PostgresUserStore.migrate} creates it.
   */
  table?: string | undefined;
  /** The table's schema; default: the first schema of the connection's `search_path`. */
  schema?: string | undefined;
}

type Row = { [column: string]: unknown; created?: boolean };

/** userId → user_id: the documented fields keep their wire names as columns. */
const fields = userFieldNames.map((field) => [field, wireFieldNames[field]] as const);
const columns = `uuid, ${fields.map(([, column]) => column).join(", ")}, extra`;

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
export class PostgresUserStore implements UserStore {
  readonly #pool: Pool;
  readonly #table: string;
  readonly #lockKey: string;
  readonly #upsert: string;

  constructor({ pool, table = "provisioned_users", schema }: PostgresUserStoreOptions) {
    this.#pool = pool;
    this.#table = schema === undefined ? quote(table) : `${quote(schema)}.${quote(table)}`;
    this.#lockKey = `platform-integration:${this.#table}`;
    this.#upsert = upsertStatement(this.#table);
  }

  /**
   * Creates the table when it is missing. Replicas that start together may all call it: an
   * advisory lock makes them take turns, since concurrent CREATE TABLE IF NOT EXISTS can fail.
   */
  async migrate(): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [this.#lockKey]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.#table} (
        uuid text PRIMARY KEY,
        ${fields.map(([, column]) => `${column} text`).join(", ")},
        extra jsonb
      )`);
    });
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    const { rows } = await this.#pool.query<Row>(this.#upsert, [JSON.stringify(patch)]);
    const row = rows[0] as Row;
    return { created: row.created === true, user: toUser(row) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    const { rowCount } = await this.#pool.query(`DELETE FROM ${this.#table} WHERE uuid = $1`, [
      uuid,
    ]);
    return { deleted: (rowCount ?? 0) > 0 };
  }

  /** The stored user with this uuid, or undefined. */
  async get(uuid: string): Promise<UserRecord | undefined> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${columns} FROM ${this.#table} WHERE uuid = $1`,
      [uuid],
    );
    return rows[0] && toUser(rows[0]);
  }

  /** Every stored user, ordered by uuid. */
  async list(): Promise<UserRecord[]> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT ${columns} FROM ${this.#table} ORDER BY uuid`,
    );
    return rows.map(toUser);
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

  async reset(): Promise<void> {
    await this.#pool.query(`TRUNCATE ${this.#table}`);
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
// `xmax = 0` holds only for a row this statement inserted.
function upsertStatement(table: string): string {
  return `INSERT INTO ${table} AS stored (${columns})
VALUES (
  $1::jsonb ->> 'uuid',
  ${fields.map(([field]) => `$1::jsonb ->> '${field}'`).join(",\n  ")},
  (SELECT jsonb_object_agg(key, value) FROM jsonb_each($1::jsonb -> 'extra')
    WHERE jsonb_typeof(value) <> 'null')
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
    '{}')
RETURNING ${columns}, xmax = 0 AS created`;
}

function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const [field, column] of fields) {
    if (row[column] !== null) user[field] = row[column];
  }
  // pg parses jsonb with JSON.parse, which keeps a `__proto__` key as a plain own property.
  if (row.extra !== null) user.extra = row.extra;
  return user as unknown as UserRecord;
}
