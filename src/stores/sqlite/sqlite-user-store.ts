// SqliteUserStore, a UserStore on node:sqlite with no dependency: the class and its public methods
// (its schema, upserts, rows and quarantine tables are siblings; the rest comes from src/users).
import type { DatabaseSync, StatementSync } from "node:sqlite";
import {
  freedValues,
  refusal,
  stepRead,
  wantedValues,
  written,
} from "../../users/quarantine-step.ts";
import type {
  PendingUser,
  QuarantineMethods,
  QuarantineStep,
} from "../../users/quarantine-store.ts";
import { expectedHolds, usernameHoldersHold } from "../../users/replace-conditions.ts";
import {
  awaitedRead,
  type OnDelete,
  type StoreRulesOptions,
  storeRules,
  type UniqueField,
} from "../../users/store-rules.ts";
import { isUserConflict } from "../../users/user-conflict-error.ts";
import type { UpsertResult, UserPatch, UserRecord } from "../../users/user-record.ts";
import type {
  ReplaceOptions,
  UserLookup,
  UserPage,
  UserPageOptions,
  UserReadOptions,
  UserStore,
  UserStoreReads,
} from "../../users/user-store.ts";
import { loadNodeSqlite } from "./load-node-sqlite.ts";
import { QuarantineTables } from "./quarantine-tables.ts";
import { conflictOf, nulRefused, toUser } from "./rows.ts";
import { busyTimeoutMs, type Row, setUpSchema, table, whileBusy } from "./schema.ts";
import { UpsertStatements } from "./upserts.ts";
import { createWholeWrites } from "./whole-writes.ts";

const { DatabaseSync: Database } = loadNodeSqlite();

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
  /** replace() and findUsers(), prepared on first use. */
  #wholeWrites: ReturnType<typeof createWholeWrites> | undefined;
  readonly #onDelete: OnDelete;
  readonly #unique: UniqueField[];
  readonly #upserts: UpsertStatements;
  readonly #quarantine: QuarantineTables;
  /** BEGIN IMMEDIATE and COMMIT, prepared once: exec() would parse them again on every step. */
  readonly #begin: StatementSync;
  readonly #commit: StatementSync;
  readonly #delete: StatementSync;
  readonly #reset: StatementSync;
  readonly #probe: StatementSync;
  readonly #count: StatementSync;
  readonly #get: StatementSync;
  readonly #list: StatementSync;
  readonly #listActive: StatementSync;
  readonly #countActive: StatementSync;
  readonly #deactivate: StatementSync;

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
    this.#begin = this.#db.prepare("BEGIN IMMEDIATE");
    this.#commit = this.#db.prepare("COMMIT");
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
        setUpSchema(this.#db, rules.unique);
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
    this.#upserts = new UpsertStatements(this.#db);
    this.#quarantine = new QuarantineTables(this.#db, this.#unique);
  }

  async upsert(patch: UserPatch): Promise<UpsertResult> {
    return this.#upsert(patch);
  }

  /** The upsert, synchronous so that a transaction can hold it without yielding. */
  #upsert(patch: UserPatch): UpsertResult {
    try {
      return this.#upserts.write(patch);
    } catch (error) {
      throw conflictOf(error) ?? error;
    }
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

  /**
   * Writes `user` whole in one statement, as {@link UserStore.replace} says. With options, in one
   * write transaction that first reads what the conditions name (the stored user, the holders of
   * its username): the comparison is of the data as read (JSON text may differ in key order), and
   * BEGIN IMMEDIATE keeps every other connection out until the write is committed.
   */
  async replace(user: UserRecord): Promise<UserRecord>;
  async replace(user: UserRecord, options: ReplaceOptions): Promise<UserRecord | undefined>;
  async replace(user: UserRecord, options?: ReplaceOptions): Promise<UserRecord | undefined> {
    const whole = this.#whole();
    if (options === undefined) return whole.replace(user);
    return this.#transaction(() => {
      if (!expectedHolds(this.#userOf(user.uuid), options)) return undefined;
      const holders =
        options.usernameHolders === undefined || user.username === undefined
          ? []
          : whole.findUsers({ field: "username", value: user.username, ignoreCase: true });
      if (!usernameHoldersHold(user.uuid, holders, options)) return undefined;
      return whole.replace(user);
    });
  }

  /** The users a look-up finds, deactivated ones too, in the order of creation. */
  findUsers(lookup: UserLookup): Promise<UserRecord[]> {
    return awaitedRead("store.findUsers()", () => this.#whole().findUsers(lookup));
  }

  /** A page of the users in the order of creation, and their total, from one statement. */
  listPage(options: UserPageOptions): Promise<UserPage> {
    return awaitedRead("store.listPage()", () => this.#whole().listPage(options));
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
      this.#quarantine.reset();
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
      const tables = this.#quarantine;
      const discarded = tables.pendingOf(uuid);
      if (discarded !== undefined) tables.unpend(uuid);
      const before = this.#userOf(uuid);
      const { deleted } = this.#remove(uuid);
      const freed = freedValues(this.#unique, before, deleted ? this.#userOf(uuid) : before);
      const wakes = tables.waiters(freed, uuid, discarded?.awaits);
      return { outcome: "deleted", deleted, discarded, wakes };
    });
  }

  async listQuarantined({ uuid }: { uuid?: string | undefined } = {}): Promise<PendingUser[]> {
    return this.#quarantine.list(uuid);
  }

  /**
   * One quarantine step inside the caller's write transaction (quarantine-step.ts decides what
   * it keeps, clears and wakes): applies the pending record with the patch merged last, or, on a
   * conflict, clears the stored user's moved values and keeps the record.
   */
  #step(
    operation: "create" | "modify",
    uuid: string,
    patch: UserPatch | undefined,
  ): QuarantineStep {
    const tables = this.#quarantine;
    const pending = tables.pendingOf(uuid);
    if (pending === undefined && patch === undefined) return { outcome: "none", wakes: [] };
    // Most writes of a sync create a user that nothing holds for: then the insert alone is the
    // step (a new user frees no value, so it wakes no one), without reading the stored user
    // first. A stored uuid, or a conflict, takes the whole step below.
    if (pending === undefined && patch !== undefined) {
      try {
        const created = this.#upserts.write(patch, true);
        if (created !== undefined) return written(undefined, created, []);
      } catch (error) {
        if (!isUserConflict(conflictOf(error))) throw error;
      }
    }
    // The stored user, for the values this step frees (none without unique fields).
    const before =
      this.#unique.length > 0 || pending !== undefined ? this.#userOf(uuid) : undefined;
    const read = stepRead(operation, patch, pending, before);
    let result: UpsertResult;
    try {
      result = this.#upsert(read.applied);
    } catch (error) {
      if (!isUserConflict(error)) throw error;
      const awaits = wantedValues(this.#unique, read).filter(
        ({ field, value }) => tables.holderOf(field, value, uuid) !== undefined,
      );
      const { pending: kept, moved, cleared, freed } = refusal(this.#unique, read, error, awaits);
      if (cleared !== undefined) tables.clear(uuid, moved);
      tables.pend(kept, pending !== undefined);
      const wakes = tables.waiters(freed, uuid, pending?.awaits);
      return { outcome: "kept", pending: kept, conflict: error, cleared, wakes };
    }
    if (pending !== undefined) tables.unpend(uuid);
    const freed = freedValues(this.#unique, before, result.user);
    return written(pending, result, tables.waiters(freed, uuid, pending?.awaits));
  }

  #userOf(uuid: string): UserRecord | undefined {
    const row = this.#get.get(uuid) as Row | undefined;
    return row && toUser(row);
  }

  /** Runs \`body\` in one write transaction; node:sqlite is synchronous, so nothing interleaves. */
  #transaction<T>(body: () => T): T {
    this.#begin.run();
    try {
      const result = body();
      this.#commit.run();
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
