// PostgresUserStore, a UserStore on the application's pg pool: the class, its public methods and its
// quarantine step (names, schema, rows and quarantine tables are siblings).
// Only pg's types are imported: any pool with pg's `query` and `connect` works, and this module
// loads without pg.
import type { Pool, PoolClient } from "pg";
import {
  freedValues,
  refusal,
  stepRead,
  wantedValues,
  written,
} from "../../users/quarantine-step.ts";
import type {
  AwaitedValue,
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "../../users/quarantine-store.ts";
import { usernameHoldersHold } from "../../users/replace-conditions.ts";
import {
  asciiLowerCase,
  awaitedRead,
  type OnDelete,
  type StoreRulesOptions,
  storeRules,
  type UniqueField,
  uniqueConflict,
} from "../../users/store-rules.ts";
import { isUserConflict, type UserConflictError } from "../../users/user-conflict-error.ts";
import {
  type UpsertResult,
  type UserPatch,
  type UserRecord,
  userWireNames,
} from "../../users/user-record.ts";
import type {
  ReplaceOptions,
  UserLookup,
  UserPage,
  UserPageOptions,
  UserReadOptions,
  UserStore,
  UserStoreReads,
} from "../../users/user-store.ts";
import { type StoreNames, storeNames } from "./names.ts";
import { QuarantineTables } from "./quarantine-tables.ts";
import {
  columns,
  type PendingRow,
  type Row,
  reactivateStatement,
  toPending,
  toUser,
  upsertStatement,
} from "./rows.ts";
import { migrateTables } from "./schema.ts";
import {
  conditionalReplaceStatement,
  findQuery,
  pageQueries,
  replaceStatement,
} from "./whole-writes.ts";

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
  readonly #names: StoreNames;
  readonly #table: string;
  readonly #tables: QuarantineTables;
  readonly #upsert: string;
  readonly #reactivate: string;
  readonly #onDelete: OnDelete;
  readonly #unique: UniqueField[];

  constructor(options: PostgresUserStoreOptions) {
    const rules = storeRules("PostgresUserStore", options);
    this.#pool = options.pool;
    this.#onDelete = rules.onDelete;
    this.#unique = rules.unique;
    this.#names = storeNames(options, this.#unique);
    this.#table = this.#names.table;
    this.#tables = new QuarantineTables(this.#names, this.#unique);
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
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [this.#names.lockKey]);
      await migrateTables(client, this.#names);
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

  /**
   * Writes `user` whole in one statement, as {@link UserStore.replace} says; with `expected`, one
   * UPDATE whose WHERE compares the stored row with it (re-checked on the row a concurrent write
   * left, as PostgreSQL does for an UPDATE), resolving undefined when it matched no row. With
   * `usernameHolders`, in one transaction holding the advisory lock of the lowercased username,
   * which every such write of every replica takes: the holders are read, compared, and the user
   * written before another such write of that username can read them.
   */
  async replace(user: UserRecord): Promise<UserRecord>;
  async replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
  async replace(user: UserRecord, options?: ReplaceOptions): Promise<UserRecord | undefined> {
    try {
      if (options?.usernameHolders !== undefined) {
        let written: UserRecord | undefined;
        await this.#transaction(async (client) => {
          written = await this.#replaceNamed(client, user, options);
        });
        return written;
      }
      return await this.#replaceOn(this.#pool, user, options);
    } catch (error) {
      throw this.#conflictOf(error) ?? error;
    }
  }

  async #replaceOn(
    client: Pool | PoolClient,
    user: UserRecord,
    options: ReplaceOptions | undefined,
  ): Promise<UserRecord | undefined> {
    const { rows } =
      options?.expected === undefined
        ? await client.query<Row>(replaceStatement(this.#table), [JSON.stringify(user)])
        : await client.query<Row>(conditionalReplaceStatement(this.#table), [
            JSON.stringify(user),
            JSON.stringify(options.expected),
          ]);
    return rows[0] === undefined ? undefined : toUser(rows[0]);
  }

  /** The write with `usernameHolders`, inside the caller's transaction. */
  async #replaceNamed(
    client: PoolClient,
    user: UserRecord,
    options: ReplaceOptions,
  ): Promise<UserRecord | undefined> {
    let holders: UserRecord[] = [];
    if (user.username !== undefined) {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
        `${this.#names.lockKey} username`,
        asciiLowerCase(user.username),
      ]);
      const lookup = { field: "username", value: user.username, ignoreCase: true } as const;
      const { text, values } = findQuery(this.#table, lookup);
      holders = (await client.query<Row>(text, values)).rows.map(toUser);
    }
    if (!usernameHoldersHold(user.uuid, holders, options)) return undefined;
    return this.#replaceOn(client, user, options);
  }

  /** The users a look-up finds, deactivated ones too, ordered by uuid. */
  findUsers(lookup: UserLookup): Promise<UserRecord[]> {
    return awaitedRead("store.findUsers()", async () => {
      const { text, values } = findQuery(this.#table, lookup);
      const { rows } = await this.#pool.query<Row>(text, values);
      return rows.map(toUser);
    });
  }

  /** A page of the users ordered by uuid, and their total, from one statement. */
  listPage(options: UserPageOptions): Promise<UserPage> {
    return awaitedRead("store.listPage()", async () => {
      const { page, total, values } = pageQueries(this.#table, options);
      const { rows } = await this.#pool.query<Row>(page, values);
      if (rows[0] !== undefined) {
        return { users: rows.map(toUser), total: Number(rows[0].page_total) };
      }
      const counted = await this.#pool.query<Row>(total, values.slice(0, -2));
      return { users: [], total: Number(counted.rows[0]?.page_total) };
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
    await this.#pool.query(
      `TRUNCATE ${this.#table}, ${this.#names.quarantine}, ${this.#names.awaits}`,
    );
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
      const discarded = await this.#tables.pendingOf(client, uuid);
      if (discarded !== undefined) await this.#tables.unpend(client, uuid);
      const before = await this.#userOn(client, uuid);
      const { deleted } = await this.#deleteOn(client, uuid);
      const after = deleted ? await this.#userOn(client, uuid) : before;
      const freed = freedValues(this.#unique, before, after);
      const wakes = await this.#tables.waiters(client, freed, uuid, discarded?.awaits);
      return { outcome: "deleted", deleted, discarded, wakes };
    });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    const { rows } =
      uuid === undefined
        ? await this.#pool.query<PendingRow>(`SELECT * FROM ${this.#names.quarantine} ORDER BY seq`)
        : await this.#pool.query<PendingRow>(
            `SELECT * FROM ${this.#names.quarantine} WHERE uuid = $1`,
            [uuid],
          );
    return rows.map(toPending);
  }

  async #step(
    client: PoolClient,
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): Promise<QuarantineStep> {
    const pending = await this.#tables.pendingOf(client, uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    const before =
      this.#unique.length > 0 || pending !== undefined
        ? await this.#userOn(client, uuid)
        : undefined;
    const read = stepRead(operation, patch, pending, before);
    await client.query("SAVEPOINT step");
    let result: UpsertResult;
    try {
      result = await this.#upsertOn(client, read.applied);
    } catch (error) {
      if (!isUserConflict(error)) throw error;
      await client.query("ROLLBACK TO SAVEPOINT step");
      // Under the index's lock, a step that frees a value either committed before this check
      // (the value reads free here) or reads this record's awaits after it commits.
      await this.#tables.lockAwaits(client);
      const awaits: AwaitedValue[] = [];
      for (const awaited of wantedValues(this.#unique, read)) {
        const column = userWireNames[awaited.field];
        const key = awaited.field === "email" ? `lower(${column} COLLATE "C")` : column;
        const { rowCount } = await client.query(
          `SELECT 1 FROM ${this.#table} WHERE ${key} = $1 AND deactivated_at IS NULL AND uuid <> $2 LIMIT 1`,
          [awaited.value, uuid],
        );
        if ((rowCount ?? 0) > 0) awaits.push(awaited);
      }
      const { pending: kept, moved, cleared, freed } = refusal(this.#unique, read, error, awaits);
      if (cleared !== undefined) {
        await client.query(
          `UPDATE ${this.#table} SET ${moved.map((field) => `${userWireNames[field]} = NULL`).join(", ")}
          WHERE uuid = $1 AND deactivated_at IS NULL`,
          [uuid],
        );
      }
      await this.#tables.pend(client, kept);
      const wakes = await this.#tables.waiters(client, freed, uuid, pending?.awaits);
      // The value it was refused for was freed between the upsert and the check: try it again.
      if (awaits.length === 0 && error.field !== undefined) wakes.push(uuid);
      return { outcome: "kept", pending: kept, conflict: error, cleared, wakes };
    }
    if (pending !== undefined) await this.#tables.unpend(client, uuid);
    const freed = freedValues(this.#unique, before, result.user);
    return written(
      pending,
      result,
      await this.#tables.waiters(client, freed, uuid, pending?.awaits),
    );
  }

  async #userOn(client: PoolClient, uuid: string): Promise<UserRecord | undefined> {
    const { rows } = await client.query<Row>(
      `SELECT ${columns} FROM ${this.#table} WHERE uuid = $1`,
      [uuid],
    );
    return rows[0] && toUser(rows[0]);
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
            this.#names.lockKey,
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
    const field = this.#names.indexes.get(constraint);
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
      // Rolled back, the connection goes back to the pool (a refused unique value is no reason to
      // close it); one in an unknown state is closed rather than handed back.
      const clean = await client.query("ROLLBACK").then(
        () => true,
        () => false,
      );
      client.release(clean ? undefined : error instanceof Error ? error : true);
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
