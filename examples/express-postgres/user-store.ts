// The application's own UserStore over its own schema (not the SDK's bundled table): `users` has a
// unique email, and `orders` point at it with a foreign key, so a user is deactivated on delete,
// never removed. A unique violation becomes a UserConflictError, which the handler's quarantine
// keeps instead of pausing the directory; kept messages live in `provisioning_quarantine`.
import type { Pool, PoolClient } from "pg";
import {
  type QuarantinedEntry,
  type QuarantineEntry,
  type QuarantineMethods,
  type ReleaseOutcome,
  type UpsertResult,
  UserConflictError,
  type UserPatch,
  type UserRecord,
  type UserStore,
} from "platform-integration/provisioning";

/** The schema: the application's tables, and the quarantine's. */
export const schema = `
CREATE TABLE IF NOT EXISTS users (
  uuid text PRIMARY KEY,
  username text,
  email text UNIQUE,
  first_name text,
  last_name text,
  deactivated_at timestamptz
);
CREATE TABLE IF NOT EXISTS orders (
  id serial PRIMARY KEY,
  user_uuid text NOT NULL REFERENCES users (uuid),
  item text NOT NULL
);
CREATE TABLE IF NOT EXISTS provisioning_quarantine (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uuid text NOT NULL,
  operation text NOT NULL,
  patch jsonb NOT NULL,
  reason text NOT NULL,
  field text,
  since timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 1
);`;

// The fields this application keeps, camelCase to column. Others (the password: users log in
// through the platform's Identity API) are not stored.
const columns = {
  username: "username",
  email: "email",
  firstName: "first_name",
  lastName: "last_name",
} as const;
type Field = keyof typeof columns;
const fields = Object.keys(columns) as Field[];

type Row = Record<string, unknown>;

// One statement: absent fields keep their column, null clears. A deactivated user is one the
// directory deleted: the upsert leaves its row alone (no row comes back) and reactivateSql writes
// the record the message carries over it, as a create would, fields it omits cleared.
const upsertSql = `INSERT INTO users AS stored (uuid, ${Object.values(columns).join(", ")})
VALUES ($1::jsonb ->> 'uuid', ${fields.map((field) => `$1::jsonb ->> '${field}'`).join(", ")})
ON CONFLICT (uuid) DO UPDATE SET
  ${fields
    .map(
      (field) =>
        `${columns[field]} = CASE WHEN $1::jsonb ? '${field}' THEN excluded.${columns[field]} ELSE stored.${columns[field]} END`,
    )
    .join(",\n  ")},
  deactivated_at = NULL
WHERE stored.deactivated_at IS NULL
RETURNING *, xmax = 0 AS created`;

const reactivateSql = `UPDATE users SET
  ${fields.map((field) => `${columns[field]} = $1::jsonb ->> '${field}'`).join(",\n  ")},
  deactivated_at = NULL
WHERE uuid = $1::jsonb ->> 'uuid' AND deactivated_at IS NOT NULL
RETURNING *, true AS created`;

/** The application's users, as the Provisioning API writes them. */
export class AppUserStore implements UserStore, QuarantineMethods {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async migrate(): Promise<void> {
    await this.#pool.query(schema);
  }

  upsert(patch: UserPatch): Promise<UpsertResult> {
    return this.#upsertOn(this.#pool, patch);
  }

  async #upsertOn(client: Pool | PoolClient, patch: UserPatch): Promise<UpsertResult> {
    const kept = Object.fromEntries(
      Object.entries(patch).filter(([key]) => key === "uuid" || key in columns),
    );
    const parameters = [JSON.stringify(kept)];
    try {
      // Another replica may write the uuid between the two statements: then try again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const { rows } = await client.query<Row>(upsertSql, parameters);
        const row = rows[0] ?? (await client.query<Row>(reactivateSql, parameters)).rows[0];
        if (row !== undefined) return { created: row.created === true, user: toUser(row) };
      }
      throw new Error(`the row of ${patch.uuid} changed between each upsert and reactivation`);
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      if (code === "23505" && constraint === "users_email_key") {
        throw new UserConflictError("the email is already held by another user", {
          field: "email",
          cause: error,
        });
      }
      throw error;
    }
  }

  /** Orders point at users: a delete deactivates. */
  async delete(uuid: string): Promise<{ deleted: boolean }> {
    const { rowCount } = await this.#pool.query(
      "UPDATE users SET deactivated_at = now() WHERE uuid = $1 AND deactivated_at IS NULL",
      [uuid],
    );
    return { deleted: (rowCount ?? 0) > 0 };
  }

  async get(uuid: string): Promise<UserRecord | undefined> {
    const { rows } = await this.#pool.query<Row>("SELECT * FROM users WHERE uuid = $1", [uuid]);
    return rows[0] && toUser(rows[0]);
  }

  async keepQuarantined(entry: QuarantineEntry): Promise<QuarantinedEntry> {
    return this.#transaction(async (client) => {
      const { rows } = await client.query<Row>(
        `INSERT INTO provisioning_quarantine (uuid, operation, patch, reason, field)
        VALUES ($1, $2, $3, $4, $5) RETURNING *`,
        [
          entry.uuid,
          entry.operation,
          JSON.stringify(entry.patch),
          entry.reason,
          entry.field ?? null,
        ],
      );
      await vacate(client, entry.uuid, entry.field);
      return toEntry(rows[0] as Row);
    });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}) {
    const { rows } = await this.#pool.query<Row>(
      `SELECT * FROM provisioning_quarantine ${uuid === undefined ? "" : "WHERE uuid = $1"} ORDER BY id`,
      uuid === undefined ? [] : [uuid],
    );
    return rows.map(toEntry);
  }

  /** Under an advisory lock on the uuid, so that two replicas never release the same messages. */
  async releaseQuarantined(uuid: string): Promise<ReleaseOutcome> {
    return this.#transaction(async (client): Promise<ReleaseOutcome> => {
      const { rows: lock } = await client.query<Row>(
        "SELECT pg_try_advisory_xact_lock(hashtext('provisioning_quarantine'), hashtext($1)) AS locked",
        [uuid],
      );
      if (lock[0]?.locked !== true) return { outcome: "none" };
      const { rows } = await client.query<Row>(
        "SELECT * FROM provisioning_quarantine WHERE uuid = $1 ORDER BY id FOR UPDATE",
        [uuid],
      );
      const entries = rows.map(toEntry);
      const oldest = entries[0];
      if (oldest === undefined) return { outcome: "none" };
      // Applied as if one after the other: later fields replace earlier ones.
      const patch = Object.assign({}, ...entries.map((entry) => entry.patch)) as UserPatch;
      await client.query("SAVEPOINT release");
      try {
        const result = await this.#upsertOn(client, patch);
        await client.query("DELETE FROM provisioning_quarantine WHERE uuid = $1", [uuid]);
        return { outcome: "released", entries, result };
      } catch (error) {
        if (!(error instanceof UserConflictError)) throw error;
        await client.query("ROLLBACK TO SAVEPOINT release");
        const { rows: retried } = await client.query<Row>(
          `UPDATE provisioning_quarantine SET attempts = attempts + 1, reason = $2, field = $3
          WHERE id = $1 RETURNING *`,
          [oldest.id, error.message, error.field ?? null],
        );
        await vacate(client, uuid, error.field);
        return { outcome: "kept", entry: toEntry(retried[0] as Row), conflict: error };
      }
    });
  }

  async discardQuarantined(uuid: string): Promise<number> {
    const { rowCount } = await this.#pool.query(
      "DELETE FROM provisioning_quarantine WHERE uuid = $1",
      [uuid],
    );
    return rowCount ?? 0;
  }

  async #transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const result = await body(client);
      await client.query("COMMIT");
      client.release();
      return result;
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }
}

/** Clears the field whose new value was refused: the directory moved the user off the old one. */
async function vacate(client: PoolClient, uuid: string, field: string | undefined) {
  if (field !== "email") return;
  await client.query("UPDATE users SET email = NULL WHERE uuid = $1", [uuid]);
}

function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const field of fields) {
    if (typeof row[columns[field]] === "string") user[field] = row[columns[field]];
  }
  if (row.deactivated_at instanceof Date) user.deactivatedAt = row.deactivated_at.toISOString();
  return user as unknown as UserRecord;
}

function toEntry(row: Row): QuarantinedEntry {
  return {
    id: String(row.id),
    uuid: row.uuid as string,
    operation: row.operation as QuarantinedEntry["operation"],
    patch: row.patch as UserPatch,
    reason: row.reason as string,
    ...(typeof row.field === "string" ? { field: row.field as "email" } : {}),
    since: (row.since as Date).toISOString(),
    attempts: row.attempts as number,
  };
}
