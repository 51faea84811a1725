import { escapeIdentifier, escapeLiteral, Pool } from "pg";
import {
  type UpsertResult,
  type UserPatch,
  type UserRecord,
  type UserStore,
  userFieldNames,
} from "../../src/provisioning/index.ts";

/** Where {@link PostgresUserStore} connects, and the table it keeps users in. */
export type PostgresUserStoreOptions = (
  | {
      /** A pool the application already has. The store uses it and leaves it open on close. */
      pool: Pool;
    }
  | {
      /** A `postgres://` URL; the store opens its own pool and ends it on close. */
      connectionString: string;
    }
) & {
  /** The table, created by {@link PostgresUserStore.migrate} (default `provisioned_users`). */
  table?: string;
};

type Row = { [column: string]: unknown; created: boolean };

/** userId → user_id: the documented fields keep their wire names as columns. */
const fields = userFieldNames.map(
  (field) => [field, field.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`)] as const,
);

/**
 * A {@link UserStore} in PostgreSQL, on `pg`. Users live in one table: a text column per
 * documented field and a `jsonb` column for `extra`.
 *
 * Every upsert is one `INSERT ... ON CONFLICT DO UPDATE` statement, so several replicas of the
 * application can receive the platform's calls at once: PostgreSQL locks the row, and no update
 * is lost. PostgreSQL text cannot hold the character U+0000; a field that contains it fails the
 * upsert (the platform then retries it, and the sync stays paused).
 *
 * @example
 * ```ts
 * const store = new PostgresUserStore({ connectionString: process.env.DATABASE_URL! });
 * await store.migrate();
 * const handler = createProvisioningHandler({ store });
 * ```
 */
export class PostgresUserStore implements UserStore {
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #table: string;
  readonly #lockKey: string;
  readonly #upsert: string;

  constructor(options: PostgresUserStoreOptions) {
    const table = options.table ?? "provisioned_users";
    this.#table = escapeIdentifier(table);
    this.#lockKey = escapeLiteral(`platform-integration:${table}`);
    if ("pool" in options) {
      this.#pool = options.pool;
      this.#ownsPool = false;
    } else {
      this.#pool = new Pool({ connectionString: options.connectionString });
      // An idle connection that breaks (a server restart) emits "error" on the pool, which would
      // end the process without a listener. The pool drops it; the next query opens another.
      this.#pool.on("error", () => {});
      this.#ownsPool = true;
    }
    this.#upsert = upsertStatement(this.#table);
  }

  /**
   * Creates the table when it is missing. Replicas that start together may all call it: an
   * advisory lock makes them take turns, since concurrent CREATE TABLE IF NOT EXISTS can fail.
   */
  async migrate(): Promise<void> {
    // Without parameters, pg sends both statements in one message: one implicit transaction,
    // which holds the lock until the table is committed.
    await this.#pool.query(`SELECT pg_advisory_xact_lock(hashtext(${this.#lockKey}));
      CREATE TABLE IF NOT EXISTS ${this.#table} (
        uuid text PRIMARY KEY,
        ${fields.map(([, column]) => `${column} text`).join(", ")},
        extra jsonb
      )`);
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    const { rows } = await this.#pool.query<Row>(this.#upsert, [JSON.stringify(patch)]);
    const row = rows[0] as Row;
    return { created: row.created, user: toUser(row) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    const { rowCount } = await this.#pool.query(`DELETE FROM ${this.#table} WHERE uuid = $1`, [
      uuid,
    ]);
    return { deleted: (rowCount ?? 0) > 0 };
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

  /** Ends the pool the store opened from a connection string; a pool passed in stays open. */
  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }
}

// The merge in one statement, bound to the patch as jsonb ($1): a field whose key is absent keeps
// its column (`?` tests the key), a JSON null clears it. `extra` merges key by key at the top
// level: the stored object minus every key the patch names, then the patch's non-null values.
// (jsonb_strip_nulls would also strip nulls nested inside values, which must stay.)
// `xmax = 0` holds only for a row this statement inserted.
function upsertStatement(table: string): string {
  return `INSERT INTO ${table} AS stored (uuid, ${fields.map(([, column]) => column).join(", ")}, extra)
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
RETURNING *, xmax = 0 AS created`;
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
