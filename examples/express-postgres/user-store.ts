// The application's own UserStore over its own schema (not the SDK's bundled table): `users` has a
// unique email, and `orders` point at it with a foreign key, so a user is deactivated on delete,
// never removed. A unique violation becomes a UserConflictError, which the handler's quarantine
// keeps instead of pausing the directory: one pending record per user in `provisioning_quarantine`,
// each change of a user one transaction under an advisory lock on its uuid.
import type { Pool, PoolClient } from "pg";
import {
  type PendingUser,
  type QuarantineMethods,
  type QuarantineStep,
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
  uuid text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  pending jsonb NOT NULL,
  awaits_email text
);
CREATE INDEX IF NOT EXISTS provisioning_quarantine_awaits ON provisioning_quarantine (awaits_email);`;

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

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    const { rows } = await this.#pool.query<Row>(
      `SELECT pending FROM provisioning_quarantine ${uuid === undefined ? "" : "WHERE uuid = $1"} ORDER BY seq`,
      uuid === undefined ? [] : [uuid],
    );
    return rows.map((row) => row.pending as PendingUser);
  }

  writeQuarantined(operation: "create" | "modify", patch: UserPatch): Promise<QuarantineStep> {
    return this.#step(patch.uuid, (client) => this.#apply(client, operation, patch.uuid, patch));
  }

  releaseQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#step(uuid, (client) => this.#apply(client, "modify", uuid, undefined));
  }

  deleteQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#step(uuid, async (client): Promise<QuarantineStep> => {
      const discarded = await pendingOf(client, uuid);
      await client.query("DELETE FROM provisioning_quarantine WHERE uuid = $1", [uuid]);
      const { rows } = await client.query<Row>(
        "UPDATE users SET deactivated_at = now() WHERE uuid = $1 AND deactivated_at IS NULL RETURNING email",
        [uuid],
      );
      const email = rows[0]?.email as string | undefined;
      return {
        outcome: "deleted",
        deleted: rows.length > 0,
        discarded,
        wakes: await waiting(client, email, uuid),
      };
    });
  }

  /** The uuid's pending record merged with `patch`, applied or kept, in the caller's step. */
  async #apply(
    client: PoolClient,
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): Promise<QuarantineStep> {
    const pending = await pendingOf(client, uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    // Later fields replace earlier ones; this store keeps no `extra`.
    const applied = { ...pending?.patch, ...patch } as UserPatch;
    const { rows } = await client.query<Row>("SELECT * FROM users WHERE uuid = $1", [uuid]);
    const before = rows[0]?.deactivated_at === null ? (rows[0]?.email as string | null) : null;
    await client.query("SAVEPOINT step");
    try {
      const result = await this.#upsertOn(client, applied);
      await client.query("DELETE FROM provisioning_quarantine WHERE uuid = $1", [uuid]);
      const freed = before !== null && before !== result.user.email ? before : undefined;
      const wakes = await waiting(client, freed, uuid);
      return pending === undefined
        ? { outcome: "applied", result, wakes }
        : { outcome: "released", pending, result, wakes };
    } catch (error) {
      if (!(error instanceof UserConflictError)) throw error;
      await client.query("ROLLBACK TO SAVEPOINT step");
      // Serialized with every step that frees an email (see `waiting`): none frees this one
      // between the conflict and the record that awaits it.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('provisioning_quarantine'))");
      // The directory moved this user off its old email: clearing it lets a swap resolve.
      const cleared = before === null ? undefined : await clearEmail(client, uuid);
      // The holder may have moved off the email between the conflict and the lock: it found no
      // record awaiting it then, so nobody would wake this one. Read again, under the lock.
      const email = typeof applied.email === "string" ? applied.email : undefined;
      const held =
        email !== undefined &&
        ((await client.query("SELECT 1 FROM users WHERE email = $1 AND uuid <> $2", [email, uuid]))
          .rowCount ?? 0) > 0;
      const kept: PendingUser = {
        uuid,
        operation: pending?.operation ?? operation,
        patch: applied,
        reason: error.message,
        fields: ["email"],
        awaits: held ? [{ field: "email", value: email }] : [],
        since: pending?.since ?? new Date().toISOString(),
        attempts: (pending?.attempts ?? 0) + 1,
        messages: (pending?.messages ?? 0) + (patch === undefined ? 0 : 1),
      };
      await client.query(
        `INSERT INTO provisioning_quarantine (uuid, pending, awaits_email) VALUES ($1, $2, $3)
        ON CONFLICT (uuid) DO UPDATE SET pending = excluded.pending, awaits_email = excluded.awaits_email`,
        [uuid, JSON.stringify(kept), kept.awaits[0]?.value ?? null],
      );
      const wakes = await waiting(client, before ?? undefined, uuid);
      // Freed meanwhile: try it again (the handler does, after this step).
      if (!held) wakes.push(uuid);
      return { outcome: "kept", pending: kept, conflict: error, cleared, wakes };
    }
  }

  /** One transaction under the uuid's advisory lock, which every replica takes. */
  #step(uuid: string, body: (client: PoolClient) => Promise<QuarantineStep>) {
    return this.#transaction(async (client) => {
      await client.query(
        "SELECT pg_advisory_xact_lock(hashtext('provisioning_quarantine'), hashtext($1))",
        [uuid],
      );
      return body(client);
    });
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

async function pendingOf(client: PoolClient, uuid: string): Promise<PendingUser | undefined> {
  const { rows } = await client.query<Row>(
    "SELECT pending FROM provisioning_quarantine WHERE uuid = $1",
    [uuid],
  );
  return rows[0]?.pending as PendingUser | undefined;
}

/** The users awaiting a freed email, under the lock that keeps a conflict and its record atomic. */
async function waiting(client: PoolClient, email: string | undefined, self: string) {
  if (email === undefined) return [];
  await client.query("SELECT pg_advisory_xact_lock(hashtext('provisioning_quarantine'))");
  const { rows } = await client.query<Row>(
    "SELECT uuid FROM provisioning_quarantine WHERE awaits_email = $1 AND uuid <> $2 ORDER BY seq",
    [email, self],
  );
  return rows.map((row) => row.uuid as string);
}

async function clearEmail(client: PoolClient, uuid: string): Promise<UserRecord> {
  const { rows } = await client.query<Row>(
    "UPDATE users SET email = NULL WHERE uuid = $1 RETURNING *",
    [uuid],
  );
  return toUser(rows[0] as Row);
}

function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const field of fields) {
    if (typeof row[columns[field]] === "string") user[field] = row[columns[field]];
  }
  if (row.deactivated_at instanceof Date) user.deactivatedAt = row.deactivated_at.toISOString();
  return user as unknown as UserRecord;
}
