// A UserStore on node:sqlite, with no dependency. From src/users it takes types, the store rules and
// the snake_case names of the fields (its columns), in a chunk shared with `platform-integration/provisioning`.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { composePatches } from "../../users/compose-patches.ts";
import { mergeUser } from "../../users/merge-user.ts";
import {
  conflictsOf,
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
import { loadNodeSqlite } from "./load-node-sqlite.ts";
import { createWholeWrites } from "./whole-writes.ts";

const { DatabaseSync: Database } = loadNodeSqlite();

// The SQL column of each documented field: its wire name (userId → user_id).
const fields = userFieldNames.map((field) => [field, userWireNames[field]] as const);

const table = "provisioned_users";
const quarantineTable = "provisioned_users_quarantine";
const awaitsTable = "provisioned_users_quarantine_awaits";
const uniqueIndexPrefix = `${table}_unique_`;

// `revision` counts the writes to a row since the user was created: 1 right after the insert or
// the reactivation of a deactivated row, which is how one statement reports whether it created
// the user.
const createTable = `CREATE TABLE IF NOT EXISTS ${table} (
  uuid TEXT PRIMARY KEY NOT NULL,
  ${fields.map(([, column]) => `${column} TEXT`).join(",\n  ")},
  extra TEXT,
  revision INTEGER NOT NULL DEFAULT 1,
  deactivated_at TEXT
) STRICT`;

// The quarantine: one pending record per uuid (the merge of its kept messages, as JSON text), in
// the order they were first kept (rowid), and the index of the values each one awaits, which a
// step that frees a value reads to find whom it wakes.
const createQuarantine = `CREATE TABLE IF NOT EXISTS ${quarantineTable} (
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

// Each write is one statement, atomic across connections and processes, and there are two for
// each shape of patch: which documented fields it carries (bit i for fields[i]) and whether it
// has `extra` (bit 8). They name only the columns the patch carries, so an absent field keeps its
// column by not being written, a null clears it, and the common patch, with no `extra`, does no
// JSON work at all. A directory sends a handful of shapes.
const extraBit = 1 << fields.length;

// `extra` is merged key by key at the top level: the stored keys the patch does not name, then the
// patch's non-null values. A nested object is replaced whole, as in mergeUser (json_patch would
// merge it recursively and drop nulls inside it); values are copied as JSON text with `->`, so
// numbers and booleans keep their exact form. `excluded.extra` holds the patch's non-null values,
// and the parameter every key the patch names (null ones too), as a JSON array.
const mergeExtra = `(SELECT nullif(json_group_object(key, json(value)), '{}') FROM (
    SELECT key, ${table}.extra -> fullkey AS value FROM json_each(${table}.extra)
      WHERE key NOT IN (SELECT value FROM json_each(?))
    UNION ALL
    SELECT key, excluded.extra -> fullkey FROM json_each(excluded.extra)
  ))`;

/**
 * The two statements of one patch shape. `insert` creates the user unless it exists, and then
 * changes nothing. `merge` is the whole upsert, reporting the merged row. Their parameters, in
 * order: the uuid, each field the patch carries, then, with `extra`, its non-null values as a
 * JSON object (or null), and for `merge` its keys as a JSON array.
 *
 * A deactivated row is a user the directory deleted: `merge` writes over it as an insert would
 * (the columns the patch does not carry cleared, `extra` the patch's alone) and starts its
 * revision again at 1, so that the write reports a creation. (In an upsert's SET, a bare column
 * names the stored row's value.)
 */
function statementsSql(shape: number): { insert: string; merge: string } {
  const carried = fields.filter((_, index) => shape & (1 << index)).map(([, column]) => column);
  const withExtra = (shape & extraBit) !== 0;
  const inserted = ["uuid", ...carried, ...(withExtra ? ["extra"] : [])];
  const insert = `INSERT INTO ${table} (${inserted.join(", ")})
VALUES (${inserted.map(() => "?").join(", ")})
ON CONFLICT (uuid) DO`;
  const active = "deactivated_at IS NULL";
  const updates = [
    ...fields.map(([, column]) =>
      carried.includes(column)
        ? `${column} = excluded.${column}`
        : `${column} = CASE WHEN ${active} THEN ${column} END`,
    ),
    withExtra
      ? `extra = CASE WHEN ${active} THEN ${mergeExtra} ELSE excluded.extra END`
      : `extra = CASE WHEN ${active} THEN extra END`,
    `revision = CASE WHEN ${active} THEN revision + 1 ELSE 1 END`,
    "deactivated_at = NULL",
  ];
  return {
    insert: `${insert} NOTHING`,
    merge: `${insert} UPDATE SET ${updates.join(", ")}\nRETURNING *`,
  };
}

type Row = Record<string, string | number | null>;

/** Options of {@link SqliteUserStore}; `unique` and `onDelete` as for every bundled store. */
export interface SqliteUserStoreOptions extends StoreRulesOptions {
  /**
   * When a write is on disk, as SQLite's `PRAGMA synchronous`. Default `"full"`.
   *
   * - `"full"`: every upsert and delete is synced to disk (an fsync) before it resolves, so a user
   *   that the API acknowledged survives a power loss. Each write then costs one fsync: on a
   *   typical SSD, most of an initial sync's time.
   * - `"normal"`: in WAL mode, the database stays consistent (never corrupt) after a crash or a
   *   power loss, and writes are synced only at checkpoints (every 10,000 pages of WAL: a few
   *   thousand users during an initial sync): faster. But a power loss (not an application
   *   crash) may lose the last writes that were already acknowledged, and the platform, having
   *   received its 201 or 204, will not send them again: those users stay missing or stale until
   *   their next change or a full re-sync. Choose it when that is acceptable, or when the
   *   platform can be made to re-sync (a reset).
   */
  synchronous?: "full" | "normal" | undefined;
}

/**
 * A {@link UserStore} in a SQLite file, on the built-in `node:sqlite` (Node 22.13 or later, or a
 * Bun or Deno that provides it; no dependency). Importing `platform-integration/sqlite` on a
 * runtime without node:sqlite throws an error that says so. Users live in the table
 * `provisioned_users`; `extra` is a JSON text column.
 *
 * Durable by default: an upsert or delete resolves only once its commit has succeeded and, with
 * the default `synchronous: "full"`, reached the disk, so the platform never gets a 2xx for a
 * change a crash or a power loss could undo. The write-ahead log is checkpointed as it grows.
 * A uuid or documented field containing U+0000 is refused (node:sqlite would read it back cut
 * short); the provisioning handler answers such a request 400 before it reaches the store.
 *
 * Every upsert writes with one SQL statement, atomic across connections (an insert, or for a user
 * that exists, the merge); the file is opened in WAL mode with a busy timeout, so several
 * processes can share it. `node:sqlite` is synchronous: a
 * statement holds the event loop while it runs, and while it waits (up to five seconds) for
 * another process's write lock.
 *
 * @example
 * ```ts
 * import { SqliteUserStore } from "platform-integration/sqlite";
 *
 * const store = new SqliteUserStore("users.db");
 * const handler = createProvisioningHandler({ store });
 * process.on("SIGTERM", () => store.close());
 * ```
 */
export class SqliteUserStore implements UserStore, UserStoreReads, QuarantineMethods {
  readonly #db: DatabaseSync;
  readonly #onDelete: OnDelete;
  // The statements of each patch shape met so far (see statementsSql), prepared once.
  readonly #statements = new Map<number, { insert: StatementSync; merge: StatementSync }>();
  readonly #delete: StatementSync;
  readonly #reset: StatementSync;
  readonly #probe: StatementSync;
  readonly #count: StatementSync;
  readonly #get: StatementSync;
  readonly #list: StatementSync;
  readonly #listActive: StatementSync;
  readonly #countActive: StatementSync;
  readonly #deactivate: StatementSync;
  readonly #unique: UniqueField[];
  readonly #pendingAll: StatementSync;
  readonly #pendingOf: StatementSync;
  readonly #pendingInsert: StatementSync;
  readonly #pendingUpdate: StatementSync;
  readonly #pendingDelete: StatementSync;
  readonly #awaitsInsert: StatementSync;
  readonly #awaitsDelete: StatementSync;
  readonly #awaiting: StatementSync;
  readonly #clearQuarantine: StatementSync;
  readonly #clearAwaits: StatementSync;
  /** For each unique field, the active user (but one) holding a value. */
  readonly #holders = new Map<UniqueField, StatementSync>();
  /** The statements clearing a set of fields, by the fields' names joined. */
  readonly #clears = new Map<string, StatementSync>();
  /** replace() and findUsers(), prepared on first use. */
  #wholeWrites: ReturnType<typeof createWholeWrites> | undefined;

  /** Opens (or creates) the database file at `path`, or a private in-memory one for `":memory:"`. */
  constructor(path: string, options: SqliteUserStoreOptions = {}) {
    const { synchronous = "full" } = options;
    if (synchronous !== "full" && synchronous !== "normal") {
      throw new TypeError(`synchronous must be "full" or "normal", not ${String(synchronous)}`);
    }
    const rules = storeRules("SqliteUserStore", options);
    this.#onDelete = rules.onDelete;
    this.#unique = rules.unique;
    this.#db = new Database(path);
    this.#db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    // Replicas may start together on one new file. Switching it to WAL takes a lock that the busy
    // timeout does not wait for (SQLite answers SQLITE_BUSY at once), so the set-up, every step of
    // which is idempotent, is tried again until the busy timeout has passed.
    whileBusy(() => {
      this.#db.exec("PRAGMA journal_mode = WAL");
      this.#db.exec(`PRAGMA synchronous = ${synchronous.toUpperCase()}`);
      // A checkpoint copies the WAL's pages into the database file and syncs both. Every 10,000
      // pages (40 MiB of WAL at most) rather than SQLite's 1,000: a page written many times
      // between two checkpoints is copied once, which costs a sync of 100,000 users a few percent
      // less.
      this.#db.exec("PRAGMA wal_autocheckpoint = 10000");
      // One write transaction, so that the format is read under the lock that writes it: a
      // replica starting beside this one migrates either before it (and this one then reads the
      // new format) or after it, never between a read of the old format and its rewrite.
      this.#transaction(() => {
        this.#db.exec(createTable);
        this.#migrate(rules.unique);
      });
    });
    this.#delete = this.#db.prepare(`DELETE FROM ${table} WHERE uuid = ?`);
    this.#reset = this.#db.prepare(`DELETE FROM ${table}`);
    this.#probe = this.#db.prepare(`SELECT 1 FROM ${table} LIMIT 1`);
    this.#count = this.#db.prepare(`SELECT count(*) AS users FROM ${table}`);
    this.#get = this.#db.prepare(`SELECT * FROM ${table} WHERE uuid = ?`);
    // rowid order is the order of creation: a user deleted and created again comes last.
    this.#list = this.#db.prepare(`SELECT * FROM ${table} ORDER BY rowid`);
    const active = "deactivated_at IS NULL";
    this.#listActive = this.#db.prepare(`SELECT * FROM ${table} WHERE ${active} ORDER BY rowid`);
    this.#countActive = this.#db.prepare(`SELECT count(*) AS users FROM ${table} WHERE ${active}`);
    this.#deactivate = this.#db.prepare(
      `UPDATE ${table} SET deactivated_at = ?, revision = revision + 1 WHERE uuid = ? AND ${active}`,
    );
    this.#pendingAll = this.#db.prepare(`SELECT * FROM ${quarantineTable} ORDER BY rowid`);
    this.#pendingOf = this.#db.prepare(`SELECT * FROM ${quarantineTable} WHERE uuid = ?`);
    this.#pendingInsert = this.#db.prepare(
      `INSERT INTO ${quarantineTable} (operation, patch, reason, fields, awaits, since, attempts, messages, uuid)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#pendingUpdate = this.#db.prepare(
      `UPDATE ${quarantineTable} SET operation = ?, patch = ?, reason = ?, fields = ?, awaits = ?,
      since = ?, attempts = ?, messages = ? WHERE uuid = ?`,
    );
    this.#pendingDelete = this.#db.prepare(`DELETE FROM ${quarantineTable} WHERE uuid = ?`);
    this.#awaitsInsert = this.#db.prepare(
      `INSERT OR IGNORE INTO ${awaitsTable} (field, value, uuid) VALUES (?, ?, ?)`,
    );
    this.#awaitsDelete = this.#db.prepare(`DELETE FROM ${awaitsTable} WHERE uuid = ?`);
    this.#awaiting = this.#db.prepare(
      `SELECT a.uuid FROM ${awaitsTable} a JOIN ${quarantineTable} q ON q.uuid = a.uuid
      WHERE a.field = ? AND a.value = ? AND a.uuid <> ? ORDER BY q.rowid LIMIT 1`,
    );
    this.#clearQuarantine = this.#db.prepare(`DELETE FROM ${quarantineTable}`);
    this.#clearAwaits = this.#db.prepare(`DELETE FROM ${awaitsTable}`);
    for (const field of this.#unique) {
      const column = userWireNames[field];
      const key = field === "email" ? `lower(${column})` : column;
      this.#holders.set(
        field,
        this.#db.prepare(
          `SELECT uuid FROM ${table} WHERE ${key} = ? AND ${active} AND ${column} IS NOT NULL AND uuid <> ? LIMIT 1`,
        ),
      );
    }
  }

  /**
   * Brings a file of an older version up to date (the deactivated_at column), creates the
   * quarantine table, and makes the unique indexes match the \`unique\` option: one partial
   * index per field, over active users that have it, dropping those no longer asked for.
   */
  #migrate(unique: UniqueField[]): void {
    const columns = this.#db.prepare(`PRAGMA table_info(${table})`).all() as Row[];
    if (!columns.some((column) => column.name === "deactivated_at")) {
      this.#db.exec(`ALTER TABLE ${table} ADD COLUMN deactivated_at TEXT`);
    }
    this.#migrateQuarantine();
    const wanted = new Map<string, string>(
      unique.map((field) => {
        const column = userWireNames[field];
        const key = field === "email" ? `lower(${column})` : column;
        const sql = `CREATE UNIQUE INDEX IF NOT EXISTS ${uniqueIndexPrefix}${column} ON ${table} (${key}) WHERE deactivated_at IS NULL AND ${column} IS NOT NULL`;
        return [`${uniqueIndexPrefix}${column}`, sql] as const;
      }),
    );
    const existing = this.#db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?")
      .all(table) as Row[];
    for (const { name } of existing) {
      if (typeof name === "string" && name.startsWith(uniqueIndexPrefix) && !wanted.has(name)) {
        this.#db.exec(`DROP INDEX ${name}`);
      }
    }
    for (const [name, sql] of wanted) {
      try {
        this.#db.exec(sql);
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
  #migrateQuarantine(): void {
    const columns = this.#db.prepare(`PRAGMA table_info(${quarantineTable})`).all() as Row[];
    if (!columns.some((column) => column.name === "id")) {
      this.#db.exec(createQuarantine);
      return;
    }
    const rows = this.#db.prepare(`SELECT * FROM ${quarantineTable} ORDER BY id`).all() as Row[];
    this.#db.exec(`DROP TABLE ${quarantineTable}`);
    this.#db.exec(createQuarantine);
    const byUuid = new Map<string, Row[]>();
    for (const row of rows) {
      const uuid = row.uuid as string;
      byUuid.set(uuid, [...(byUuid.get(uuid) ?? []), row]);
    }
    const insert = this.#db.prepare(
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

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    return this.#upsert(patch);
  }

  /** The upsert, synchronous so that a transaction can hold it without yielding. */
  #upsert(patch: UserPatch): UpsertResult {
    try {
      return this.#write(patch);
    } catch (error) {
      throw conflictOf(error) ?? error;
    }
  }

  #write(patch: UserPatch): UpsertResult {
    if (patch.uuid.includes("\0")) throw new TypeError(nulRefused("uuid"));
    // The parameters, and the row that an insert would store.
    const values: (string | null)[] = [patch.uuid];
    const inserted: Row = { uuid: patch.uuid };
    let shape = 0;
    for (let index = 0; index < fields.length; index++) {
      const [field, column] = fields[index] as [UserFieldName, string];
      const value = patch[field];
      if (value !== undefined) {
        if (value?.includes("\0")) throw new TypeError(nulRefused(field));
        shape |= 1 << index;
        values.push(value);
        inserted[column] = value;
      }
    }
    let keys: string | undefined;
    if (patch.extra !== undefined) {
      shape |= extraBit;
      const extra = patch.extra;
      // Written as JSON text rather than through an object, so that `__proto__` stays a plain key.
      const kept = Object.keys(extra)
        .filter((key) => extra[key] !== null)
        .map((key) => `${JSON.stringify(key)}:${JSON.stringify(extra[key])}`);
      inserted.extra = kept.length === 0 ? null : `{${kept.join(",")}}`;
      values.push(inserted.extra);
      keys = JSON.stringify(Object.keys(extra));
    }
    let statements = this.#statements.get(shape);
    if (statements === undefined) {
      const sql = statementsSql(shape);
      statements = { insert: this.#db.prepare(sql.insert), merge: this.#db.prepare(sql.merge) };
      this.#statements.set(shape, statements);
    }
    // Most upserts, all those of an initial sync, create the user. A plain insert does it for
    // less than the merge, whose RETURNING costs an ephemeral table and a row object every time
    // (about 15 µs of a request's CPU), and the new user is the patch itself.
    if (Number(statements.insert.run(...values).changes) > 0) {
      return { created: true, user: toUser(inserted) };
    }
    // The user exists: merge. The merge is a whole upsert on its own, so if another process has
    // deleted the user since the insert, it creates it again and says so.
    if (keys !== undefined) values.push(keys);
    // all(), not get(): get() stops at the returned row and resets the statement, which commits
    // there, and node:sqlite ignores the reset's result: a failed commit would be reported as
    // stored. (SQLite also skips its WAL hook then: no automatic checkpoint.)
    const row = statements.merge.all(...values)[0] as Row;
    return { created: row.revision === 1, user: toUser(row) };
  }

  async delete(uuid: string): Promise<{ deleted: boolean }> {
    return this.#remove(uuid);
  }

  #remove(uuid: string): { deleted: boolean } {
    const statement = this.#onDelete === "delete" ? this.#delete : this.#deactivate;
    const changes =
      this.#onDelete === "delete"
        ? statement.run(uuid).changes
        : statement.run(new Date().toISOString(), uuid).changes;
    return { deleted: Number(changes) > 0 };
  }

  /** Writes `user` whole in one statement, as {@link UserStore.replace} says. */
  async replace(user: UserRecord): Promise<UserRecord> {
    return this.#whole().replace(user);
  }

  /** The users a look-up finds, deactivated ones too, in the order of creation. */
  findUsers(lookup: UserLookup): Promise<UserRecord[]> {
    return awaitedRead("store.findUsers()", () => this.#whole().findUsers(lookup));
  }

  #whole(): ReturnType<typeof createWholeWrites> {
    this.#wholeWrites ??= createWholeWrites({
      db: this.#db,
      table,
      toUser,
      conflictOf,
      checkText: (what, value) => {
        if (value.includes("\0")) throw new TypeError(nulRefused(what));
      },
    });
    return this.#wholeWrites;
  }

  /** True while the file can be read: false once closed, or when the table has gone. */
  ready(): boolean {
    try {
      this.#probe.get();
      return true;
    } catch {
      return false;
    }
  }

  /** Removes every user and every kept message: the re-sync that follows supersedes them. */
  async reset(): Promise<void> {
    this.#transaction(() => {
      this.#reset.run();
      this.#clearQuarantine.run();
      this.#clearAwaits.run();
    });
  }

  /** The stored user with this uuid (a deactivated one too), or undefined. */
  get(uuid: string): Promise<UserRecord | undefined> {
    return awaitedRead("store.get(uuid)", () => {
      const row = this.#get.get(uuid) as Row | undefined;
      return row && toUser(row);
    });
  }

  /** Every stored user, in the order they were created; deactivated ones only when asked. */
  list({ includeDeactivated = false }: UserReadOptions = {}): Promise<UserRecord[]> {
    return awaitedRead("store.list()", () =>
      ((includeDeactivated ? this.#list : this.#listActive).all() as Row[]).map(toUser),
    );
  }

  /**
   * How many users the table holds now, deactivated ones only when asked: for a health check,
   * or to compare with the directory.
   */
  count({ includeDeactivated = false }: UserReadOptions = {}): Promise<number> {
    return awaitedRead("store.count()", () =>
      Number(((includeDeactivated ? this.#count : this.#countActive).get() as Row).users),
    );
  }

  /** One write transaction (BEGIN IMMEDIATE, which every other connection's waits for). */
  async writeQuarantined(
    operation: "create" | "modify",
    patch: UserPatch,
  ): Promise<QuarantineStep> {
    return this.#transaction(() => this.#step(operation, patch.uuid, patch));
  }

  /** One write transaction, as {@link writeQuarantined}. */
  async releaseQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#transaction(() => this.#step("modify", uuid, undefined));
  }

  /** One write transaction: the delete, the discard and the wakes. */
  async deleteQuarantined(uuid: string): Promise<QuarantineStep> {
    return this.#transaction((): QuarantineStep => {
      const discarded = this.#pendingRecord(uuid);
      if (discarded !== undefined) this.#unpend(uuid);
      const before = this.#userOf(uuid);
      const { deleted } = this.#remove(uuid);
      const freed = freedValues(this.#unique, before, deleted ? this.#userOf(uuid) : before);
      const wakes = this.#waiters(freed, uuid, discarded?.awaits);
      return { outcome: "deleted", deleted, discarded, wakes };
    });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    const rows = (uuid === undefined ? this.#pendingAll.all() : this.#pendingOf.all(uuid)) as Row[];
    return rows.map(toPending);
  }

  /** One quarantine step, inside the caller's write transaction. */
  #step(
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): QuarantineStep {
    const pending = this.#pendingRecord(uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    const applied = stepPatch(pending, patch);
    // The stored user, for the values this step frees (none without unique fields).
    const before =
      this.#unique.length > 0 || pending !== undefined ? this.#userOf(uuid) : undefined;
    let result: UpsertResult;
    try {
      result = this.#upsert(applied);
    } catch (error) {
      if (!isUserConflict(error)) throw error;
      // A failed statement undoes only itself: the transaction goes on.
      // What the upsert would have stored: a deactivated user starts from the patch alone.
      const merged = mergeUser(before?.deactivatedAt === undefined ? before : undefined, applied);
      const awaits = conflictsOf(this.#unique, merged, (field, value) => {
        const row = this.#holders.get(field)?.get(value, uuid) as Row | undefined;
        return row?.uuid as string | undefined;
      });
      const moved = movedFields(this.#unique, before, merged);
      const cleared = withCleared(before, moved);
      if (cleared !== undefined) this.#clear(uuid, moved);
      const kept = keptRecord(pending, operation, applied, error, awaits, patch !== undefined);
      this.#pend(kept, pending !== undefined);
      const freed = freedValues(this.#unique, before, cleared ?? before);
      return {
        outcome: "kept",
        pending: kept,
        conflict: error,
        cleared,
        wakes: this.#waiters(freed, uuid, pending?.awaits),
      };
    }
    if (pending !== undefined) this.#unpend(uuid);
    const wakes = this.#waiters(
      freedValues(this.#unique, before, result.user),
      uuid,
      pending?.awaits,
    );
    return pending === undefined
      ? { outcome: "applied", result, wakes }
      : { outcome: "released", pending, result, wakes };
  }

  #userOf(uuid: string): UserRecord | undefined {
    const row = this.#get.get(uuid) as Row | undefined;
    return row && toUser(row);
  }

  #pendingRecord(uuid: string): PendingUser | undefined {
    const row = this.#pendingOf.get(uuid) as Row | undefined;
    return row && toPending(row);
  }

  #pend(pending: PendingUser, exists: boolean): void {
    (exists ? this.#pendingUpdate : this.#pendingInsert).run(...pendingColumns(pending));
    this.#awaitsDelete.run(pending.uuid);
    for (const { field, value } of pending.awaits)
      this.#awaitsInsert.run(field, value, pending.uuid);
  }

  #unpend(uuid: string): void {
    this.#pendingDelete.run(uuid);
    this.#awaitsDelete.run(uuid);
  }

  /**
   * For each value of `freed`, and each of `passed` (what the step's uuid awaited) that no active
   * user holds now, the oldest pending uuid awaiting it but `self`: one per value, since the
   * first that takes it holds it again; one that does not passes it on in its own step.
   */
  #waiters(freed: AwaitedValue[], self: string, passed: AwaitedValue[] = []): string[] {
    const wakes = new Set<string>();
    const free = passed.filter(
      ({ field, value }) => this.#holders.get(field as UniqueField)?.get(value, "") === undefined,
    );
    for (const { field, value } of [...freed, ...free]) {
      const row = this.#awaiting.get(field, value, self) as Row | undefined;
      if (row !== undefined) wakes.add(row.uuid as string);
    }
    return [...wakes];
  }

  /** Clears `fields` of an active user, whose new values for them another user holds. */
  #clear(uuid: string, fields: UserFieldName[]): void {
    const key = fields.join(",");
    let statement = this.#clears.get(key);
    if (statement === undefined) {
      const sets = fields.map((field) => `${userWireNames[field]} = NULL`).join(", ");
      statement = this.#db.prepare(
        `UPDATE ${table} SET ${sets}, revision = revision + 1 WHERE uuid = ? AND deactivated_at IS NULL`,
      );
      this.#clears.set(key, statement);
    }
    statement.run(uuid);
  }

  /** Runs \`body\` in one write transaction; node:sqlite is synchronous, so nothing interleaves. */
  #transaction<T>(body: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const result = body();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Closes the database; the store cannot be used afterwards. */
  close(): void {
    this.#db.close();
  }
}

/** How long a statement waits for another connection's lock, and the set-up for a busy file. */
const busyTimeoutMs = 5000;

/**
 * Runs `setUp` again while it fails with SQLITE_BUSY, pausing a few milliseconds between tries,
 * until {@link busyTimeoutMs} has passed; then, or on any other error, throws that error.
 */
function whileBusy(setUp: () => void): void {
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

// node:sqlite reads text up to its first U+0000: a value holding one would come back cut short.
// (`extra` is JSON text, where it is written \u0000.) The handler refuses such values with a 400.
function nulRefused(field: string): string {
  return `SqliteUserStore cannot store a ${field} containing U+0000: node:sqlite would read it back cut short`;
}

/** The user in a row: the stored one, or the one an insert stored (only the columns it set). */
function toUser(row: Row): UserRecord {
  const user: Record<string, unknown> = { uuid: row.uuid };
  for (const [field, column] of fields) {
    if (typeof row[column] === "string") user[field] = row[column];
  }
  // JSON.parse keeps a `__proto__` key as a plain own property.
  if (typeof row.extra === "string") user.extra = JSON.parse(row.extra);
  if (typeof row.deactivated_at === "string") user.deactivatedAt = row.deactivated_at;
  return user as unknown as UserRecord;
}

function toPending(row: Row): PendingUser {
  return {
    uuid: row.uuid as string,
    operation: row.operation as PendingUser["operation"],
    patch: JSON.parse(row.patch as string),
    reason: row.reason as string,
    fields: JSON.parse(row.fields as string),
    awaits: JSON.parse(row.awaits as string),
    since: row.since as string,
    attempts: Number(row.attempts),
    messages: Number(row.messages),
  };
}

const columnFields = new Map(fields.map(([field, column]) => [column, field]));

/**
 * A unique index's violation as a UserConflictError naming the field: node:sqlite reports it as
 * SQLITE_CONSTRAINT_UNIQUE (2067), naming the index or its column in the message.
 */
function conflictOf(error: unknown): UserConflictError | undefined {
  if (!(error instanceof Error) || (error as { errcode?: unknown }).errcode !== 2067) return;
  // An index on an expression (email's lower()) is named; one on a column names the column.
  const index = new RegExp(`(?:${uniqueIndexPrefix}|${table}\\.)(\\w+)`).exec(error.message)?.[1];
  const field = index === undefined ? undefined : columnFields.get(index);
  if (field === undefined) return;
  return uniqueConflict(field as UniqueField, error);
}
