// A UserStore on PostgreSQL through a pool the application passes in. Only pg's types are
// imported: any pool with pg's `query` and `connect` works, and this module loads without pg.
import type { Pool, PoolClient } from "pg";
import { composePatches } from "../../users/compose-patches.ts";
import { mergeUser } from "../../users/merge-user.ts";
import {
  freedValues,
  keptRecord,
  movedFields,
  pendingColumns,
  stepPatch,
  withCleared,
} from "../../users/pending.ts";
import type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "../../users/quarantine-store.ts";
import {
  awaitedRead,
  type OnDelete,
  type StoreRulesOptions,
  storeRules,
  type UniqueField,
  uniqueConflict,
  uniqueValue,
} from "../../users/store-rules.ts";
import { isUserConflict, type UserConflictError } from "../../users/user-conflict-error.ts";
import {
  type UpsertResult,
  type UserFieldName,
  type UserPatch,
  type UserRecord,
  userFieldNames,
  userWireNames,
} from "../../users/user-record.ts";
import type {
  UserLookup,
  UserReadOptions,
  UserStore,
  UserStoreReads,
} from "../../users/user-store.ts";
import { findQuery, replaceStatement } from "./whole-writes.ts";

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
const fields = userFieldNames.map((field) => [field, userWireNames[field]] as const);
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
  readonly #awaits: string;
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
    this.#awaits = inSchema(
      byteLength(`${quarantine}_awaits`) <= 63 ? `${quarantine}_awaits` : `pi_awaits_${hash}`,
    );
    this.#indexSuffix = hash;
    this.#indexes = new Map(
      this.#unique.map((field) => [`pi_unique_${userWireNames[field]}_${hash}`, field]),
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
      await this.#migrateQuarantine(client);
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
        const column = userWireNames[field];
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

  /**
   * The quarantine's tables: one pending record per uuid and the index of the values each awaits.
   * An older version kept one row per message: those are merged into one record per uuid, in
   * order, awaiting nothing named (the uuid's next message or `retryQuarantined()` tries them).
   */
  async #migrateQuarantine(client: PoolClient): Promise<void> {
    const { rows: old } = await client.query<{ old: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1)
      AND attname = 'id' AND NOT attisdropped) AS old`,
      [this.#quarantine],
    );
    let kept: EntryRow[] = [];
    if (old[0]?.old === true) {
      kept = (await client.query<EntryRow>(`SELECT * FROM ${this.#quarantine} ORDER BY id`)).rows;
      await client.query(`DROP TABLE ${this.#quarantine}`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS ${this.#quarantine} (
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
    await client.query(`CREATE TABLE IF NOT EXISTS ${this.#awaits} (
      field text NOT NULL,
      value text NOT NULL,
      uuid text NOT NULL,
      PRIMARY KEY (field, value, uuid)
    )`);
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${quote(`pi_awaits_uuid_${this.#indexSuffix}`)} ON ${this.#awaits} (uuid)`,
    );
    const byUuid = new Map<string, EntryRow[]>();
    for (const row of kept) byUuid.set(row.uuid, [...(byUuid.get(row.uuid) ?? []), row]);
    for (const [uuid, rows] of byUuid) {
      const first = rows[0] as EntryRow;
      await client.query(
        `INSERT INTO ${this.#quarantine} (uuid, operation, patch, reason, fields, awaits, since, attempts, messages)
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
    return this.#deleteOn(this.#pool, uuid);
  }

  async #deleteOn(client: Pool | PoolClient, uuid: string): Promise<{ deleted: boolean }> {
    const { rowCount } =
      this.#onDelete === "delete"
        ? await client.query(`DELETE FROM ${this.#table} WHERE uuid = $1`, [uuid])
        : await client.query(
            `UPDATE ${this.#table} SET deactivated_at = $2 WHERE uuid = $1 AND deactivated_at IS NULL`,
            [uuid, new Date().toISOString()],
          );
    return { deleted: (rowCount ?? 0) > 0 };
  }

  /** Writes `user` whole in one statement, as {@link UserStore.replace} says. */
  async replace(user: UserRecord): Promise<UserRecord> {
    try {
      const { rows } = await this.#pool.query<Row>(replaceStatement(this.#table), [
        JSON.stringify(user),
      ]);
      return toUser(rows[0] as Row);
    } catch (error) {
      throw this.#conflictOf(error) ?? error;
    }
  }

  /** The users a look-up finds, deactivated ones too, ordered by uuid. */
  findUsers(lookup: UserLookup): Promise<UserRecord[]> {
    return awaitedRead("store.findUsers()", async () => {
      const { text, values } = findQuery(this.#table, lookup);
      const { rows } = await this.#pool.query<Row>(text, values);
      return rows.map(toUser);
    });
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
    await this.#pool.query(`TRUNCATE ${this.#table}, ${this.#quarantine}, ${this.#awaits}`);
  }

  /** One transaction holding the uuid's advisory lock from its start to its commit. */
  async writeQuarantined(
    operation: "create" | "modify",
    patch: UserPatch,
  ): Promise<QuarantineStep> {
    return this.#locked(patch.uuid, (client) => this.#step(client, operation, patch.uuid, patch));
  }

  /** One transaction holding the uuid's advisory lock, as {@link writeQuarantined}. */
  async releaseQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#locked(uuid, (client) => this.#step(client, "modify", uuid, undefined));
  }

  /** One transaction holding the uuid's advisory lock: the delete, the discard and the wakes. */
  async deleteQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#locked(uuid, async (client): Promise<QuarantineStep> => {
      const discarded = await this.#pendingOf(client, uuid);
      if (discarded !== undefined) await this.#unpend(client, uuid);
      const before = await this.#userOn(client, uuid);
      const { deleted } = await this.#deleteOn(client, uuid);
      const after = deleted ? await this.#userOn(client, uuid) : before;
      const freed = freedValues(this.#unique, before, after);
      const wakes = await this.#waiters(client, freed, uuid, discarded?.awaits);
      return { outcome: "deleted", deleted, discarded, wakes };
    });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    const { rows } =
      uuid === undefined
        ? await this.#pool.query<PendingRow>(`SELECT * FROM ${this.#quarantine} ORDER BY seq`)
        : await this.#pool.query<PendingRow>(`SELECT * FROM ${this.#quarantine} WHERE uuid = $1`, [
            uuid,
          ]);
    return rows.map(toPending);
  }

  async #step(
    client: PoolClient,
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): Promise<QuarantineStep> {
    const pending = await this.#pendingOf(client, uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    const applied = stepPatch(pending, patch);
    const before =
      this.#unique.length > 0 || pending !== undefined
        ? await this.#userOn(client, uuid)
        : undefined;
    await client.query("SAVEPOINT step");
    let result: UpsertResult;
    try {
      result = await this.#upsertOn(client, applied);
    } catch (error) {
      if (!isUserConflict(error)) throw error;
      await client.query("ROLLBACK TO SAVEPOINT step");
      // Under the index's lock, a step that frees a value either committed before this check
      // (the value reads free here) or reads this record's awaits after it commits.
      await this.#lockAwaits(client);
      const awaits: AwaitedValue[] = [];
      // What the upsert would have stored: a deactivated user starts from the patch alone.
      const merged = mergeUser(before?.deactivatedAt === undefined ? before : undefined, applied);
      for (const field of this.#unique) {
        const raw = merged[field];
        if (raw === undefined) continue;
        const column = userWireNames[field];
        const key = field === "email" ? `lower(${column} COLLATE "C")` : column;
        const { rowCount } = await client.query(
          `SELECT 1 FROM ${this.#table} WHERE ${key} = $1 AND deactivated_at IS NULL AND uuid <> $2 LIMIT 1`,
          [uniqueValue(field, raw), uuid],
        );
        if ((rowCount ?? 0) > 0) awaits.push({ field, value: uniqueValue(field, raw) });
      }
      const moved = movedFields(this.#unique, before, merged);
      const cleared = withCleared(before, moved);
      if (cleared !== undefined) {
        await client.query(
          `UPDATE ${this.#table} SET ${moved.map((field) => `${userWireNames[field]} = NULL`).join(", ")}
          WHERE uuid = $1 AND deactivated_at IS NULL`,
          [uuid],
        );
      }
      const kept = keptRecord(pending, operation, applied, error, awaits, patch !== undefined);
      await this.#pend(client, kept);
      const wakes = await this.#waiters(
        client,
        freedValues(this.#unique, before, cleared ?? before),
        uuid,
        pending?.awaits,
      );
      // The value it was refused for was freed between the upsert and the check: try it again.
      if (awaits.length === 0 && error.field !== undefined) wakes.push(uuid);
      return { outcome: "kept", pending: kept, conflict: error, cleared, wakes };
    }
    if (pending !== undefined) await this.#unpend(client, uuid);
    const freed = freedValues(this.#unique, before, result.user);
    const wakes = await this.#waiters(client, freed, uuid, pending?.awaits);
    return pending === undefined
      ? { outcome: "applied", result, wakes }
      : { outcome: "released", pending, result, wakes };
  }

  async #userOn(client: PoolClient, uuid: string): Promise<UserRecord | undefined> {
    const { rows } = await client.query<Row>(
      `SELECT ${columns} FROM ${this.#table} WHERE uuid = $1`,
      [uuid],
    );
    return rows[0] && toUser(rows[0]);
  }

  async #pendingOf(client: PoolClient, uuid: string): Promise<PendingUser | undefined> {
    const { rows } = await client.query<PendingRow>(
      `SELECT * FROM ${this.#quarantine} WHERE uuid = $1`,
      [uuid],
    );
    return rows[0] && toPending(rows[0]);
  }

  async #pend(client: PoolClient, pending: PendingUser): Promise<void> {
    await client.query(
      `INSERT INTO ${this.#quarantine} (operation, patch, reason, fields, awaits, since, attempts, messages, uuid)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
      ON CONFLICT (uuid) DO UPDATE SET operation = excluded.operation, patch = excluded.patch,
        reason = excluded.reason, fields = excluded.fields, awaits = excluded.awaits,
        attempts = excluded.attempts, messages = excluded.messages`,
      pendingColumns(pending),
    );
    await client.query(`DELETE FROM ${this.#awaits} WHERE uuid = $1`, [pending.uuid]);
    if (pending.awaits.length > 0) {
      await client.query(
        `INSERT INTO ${this.#awaits} (field, value, uuid)
        SELECT field, value, $3 FROM unnest($1::text[], $2::text[]) AS a(field, value)
        ON CONFLICT DO NOTHING`,
        [
          pending.awaits.map((awaited) => awaited.field),
          pending.awaits.map((awaited) => awaited.value),
          pending.uuid,
        ],
      );
    }
  }

  /** Removes the pending record this step read: its key is the uuid, whose lock the step holds. */
  async #unpend(client: PoolClient, uuid: string): Promise<void> {
    await client.query(`DELETE FROM ${this.#quarantine} WHERE uuid = $1`, [uuid]);
    await client.query(`DELETE FROM ${this.#awaits} WHERE uuid = $1`, [uuid]);
  }

  /**
   * For each value of `freed`, and each of `passed` (what the step's uuid awaited) that no active
   * user holds now, the oldest pending uuid awaiting it but `self`: one per value, since the
   * first that takes it holds it again; one that does not passes it on in its own step.
   */
  async #waiters(
    client: PoolClient,
    freed: AwaitedValue[],
    self: string,
    passed: AwaitedValue[] = [],
  ): Promise<string[]> {
    if (freed.length === 0 && passed.length === 0) return [];
    await this.#lockAwaits(client);
    const values = [...freed];
    for (const awaited of passed) {
      const field = awaited.field as UniqueField;
      if (!this.#unique.includes(field)) continue;
      const column = userWireNames[field];
      const key = field === "email" ? `lower(${column} COLLATE "C")` : column;
      const { rowCount } = await client.query(
        `SELECT 1 FROM ${this.#table} WHERE ${key} = $1 AND deactivated_at IS NULL LIMIT 1`,
        [awaited.value],
      );
      if ((rowCount ?? 0) === 0) values.push(awaited);
    }
    if (values.length === 0) return [];
    const { rows } = await client.query<{ uuid: string; seq: string }>(
      `SELECT DISTINCT ON (a.field, a.value) a.uuid, q.seq FROM ${this.#awaits} a
      JOIN ${this.#quarantine} q ON q.uuid = a.uuid
      JOIN unnest($1::text[], $2::text[]) AS f(field, value)
        ON f.field = a.field AND f.value = a.value
      WHERE a.uuid <> $3 ORDER BY a.field, a.value, q.seq`,
      [values.map((value) => value.field), values.map((value) => value.value), self],
    );
    rows.sort((one, other) => Number(BigInt(one.seq) - BigInt(other.seq)));
    return [...new Set(rows.map((row) => row.uuid))];
  }

  /**
   * The lock of the awaited values' index, to the transaction's end. Taken only by a step that
   * keeps a conflict or frees a value, after its own writes but for clearing its own fields. That
   * does not rule out deadlocks: the clear, or a step's upsert, can wait in a unique index for a
   * value another uncommitted step holds, which may wait for this lock. PostgreSQL detects such a
   * cycle and aborts one step, which {@link PostgresUserStore.#locked} runs again.
   */
  async #lockAwaits(client: PoolClient): Promise<void> {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${this.#lockKey}:awaits`]);
  }

  /**
   * A transaction holding the advisory lock of `uuid`, shared by every replica, to its end.
   * Steps of different users can still wait on each other inside the unique indexes (each
   * writing a value the other's uncommitted step holds or frees): PostgreSQL then aborts one
   * with deadlock_detected. A failed step changed nothing, so it runs again, a few times.
   */
  async #locked<T>(uuid: string, body: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let result: T | undefined;
      try {
        await this.#transaction(async (client) => {
          await client.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
            this.#lockKey,
            uuid,
          ]);
          result = await body(client);
        });
        return result as T;
      } catch (error) {
        if (attempt >= stepAttempts || !retriable(error)) throw error;
      }
    }
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

/** How many times a quarantine step's transaction runs when PostgreSQL aborts it as a deadlock. */
const stepAttempts = 4;

/**
 * deadlock_detected (40P01) or serialization_failure (40001), also as the cause of the conflict
 * error a unique violation becomes: PostgreSQL rolled the transaction back, running it again is safe.
 */
function retriable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 3; depth++) {
    const code = (cause as { code?: unknown } | null)?.code;
    if (code === "40P01" || code === "40001") return true;
    cause = (cause as { cause?: unknown } | null)?.cause;
  }
  return false;
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

type PendingRow = {
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

function toPending(row: PendingRow): PendingUser {
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
