// The SQLite store's quarantine tables as its steps (sqlite-user-store.ts) use them: the
// pending records, the index of the values they await, and the active holder of a unique value.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { pendingColumns } from "../../users/quarantine-step.ts";
import type { AwaitedValue, PendingUser } from "../../users/quarantine-store.ts";
import type { UniqueField } from "../../users/store-rules.ts";
import { type UserFieldName, userWireNames } from "../../users/user-record.ts";
import { toPending } from "./rows.ts";
import { awaitsTable, quarantineTable, type Row, table } from "./schema.ts";

/** The quarantine's statements over one database, prepared once. */
export class QuarantineTables {
  readonly #db: DatabaseSync;
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

  constructor(db: DatabaseSync, unique: readonly UniqueField[]) {
    this.#db = db;
    this.#pendingAll = db.prepare(`SELECT * FROM ${quarantineTable} ORDER BY rowid`);
    this.#pendingOf = db.prepare(`SELECT * FROM ${quarantineTable} WHERE uuid = ?`);
    this.#pendingInsert = db.prepare(
      `INSERT INTO ${quarantineTable} (operation, patch, reason, fields, awaits, since, attempts, messages, uuid)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#pendingUpdate = db.prepare(
      `UPDATE ${quarantineTable} SET operation = ?, patch = ?, reason = ?, fields = ?, awaits = ?,
      since = ?, attempts = ?, messages = ? WHERE uuid = ?`,
    );
    this.#pendingDelete = db.prepare(`DELETE FROM ${quarantineTable} WHERE uuid = ?`);
    this.#awaitsInsert = db.prepare(
      `INSERT OR IGNORE INTO ${awaitsTable} (field, value, uuid) VALUES (?, ?, ?)`,
    );
    this.#awaitsDelete = db.prepare(`DELETE FROM ${awaitsTable} WHERE uuid = ?`);
    this.#awaiting = db.prepare(
      `SELECT a.uuid FROM ${awaitsTable} a JOIN ${quarantineTable} q ON q.uuid = a.uuid
      WHERE a.field = ? AND a.value = ? AND a.uuid <> ? ORDER BY q.rowid LIMIT 1`,
    );
    this.#clearQuarantine = db.prepare(`DELETE FROM ${quarantineTable}`);
    this.#clearAwaits = db.prepare(`DELETE FROM ${awaitsTable}`);
    for (const field of unique) {
      const column = userWireNames[field];
      const key = field === "email" ? `lower(${column})` : column;
      this.#holders.set(
        field,
        db.prepare(
          `SELECT uuid FROM ${table} WHERE ${key} = ? AND deactivated_at IS NULL AND ${column} IS NOT NULL AND uuid <> ? LIMIT 1`,
        ),
      );
    }
  }

  /** Every pending record, oldest first, or the one of `uuid`. */
  list(uuid: string | undefined): PendingUser[] {
    const rows = (uuid === undefined ? this.#pendingAll.all() : this.#pendingOf.all(uuid)) as Row[];
    return rows.map(toPending);
  }

  pendingOf(uuid: string): PendingUser | undefined {
    const row = this.#pendingOf.get(uuid) as Row | undefined;
    return row && toPending(row);
  }

  pend(pending: PendingUser, exists: boolean): void {
    (exists ? this.#pendingUpdate : this.#pendingInsert).run(...pendingColumns(pending));
    this.#awaitsDelete.run(pending.uuid);
    for (const { field, value } of pending.awaits)
      this.#awaitsInsert.run(field, value, pending.uuid);
  }

  unpend(uuid: string): void {
    this.#pendingDelete.run(uuid);
    this.#awaitsDelete.run(uuid);
  }

  /** The active user other than `uuid` holding `value` (lower case for an email). */
  holderOf(field: UniqueField, value: string, uuid: string): string | undefined {
    const row = this.#holders.get(field)?.get(value, uuid) as Row | undefined;
    return row?.uuid as string | undefined;
  }

  /**
   * For each value of `freed`, and each of `passed` (what the step's uuid awaited) that no active
   * user holds now, the oldest pending uuid awaiting it but `self`: one per value, since the
   * first that takes it holds it again; one that does not passes it on in its own step.
   */
  waiters(freed: AwaitedValue[], self: string, passed: AwaitedValue[] = []): string[] {
    const wakes = new Set<string>();
    const free = passed.filter(
      ({ field, value }) => this.holderOf(field as UniqueField, value, "") === undefined,
    );
    for (const { field, value } of [...freed, ...free]) {
      const row = this.#awaiting.get(field, value, self) as Row | undefined;
      if (row !== undefined) wakes.add(row.uuid as string);
    }
    return [...wakes];
  }

  /** Clears `fields` of an active user, whose new values for them another user holds. */
  clear(uuid: string, fields: UserFieldName[]): void {
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

  /** Removes every pending record: a reset supersedes them. */
  reset(): void {
    this.#clearQuarantine.run();
    this.#clearAwaits.run();
  }
}
