// The PostgreSQL store's quarantine tables as its steps use them, inside a step's transaction:
// the pending records, the index of the values they await, and the lock of that index.
import type { PoolClient } from "pg";
import { pendingColumns } from "../../users/quarantine-step.ts";
import type { AwaitedValue, PendingUser } from "../../users/quarantine-store.ts";
import type { UniqueField } from "../../users/store-rules.ts";
import { userWireNames } from "../../users/user-record.ts";
import type { StoreNames } from "./names.ts";
import { type PendingRow, toPending } from "./rows.ts";

/** The quarantine's reads and writes over one store's tables, each on the step's client. */
export class QuarantineTables {
  readonly #names: StoreNames;
  readonly #unique: readonly UniqueField[];

  constructor(names: StoreNames, unique: readonly UniqueField[]) {
    this.#names = names;
    this.#unique = unique;
  }

  async pendingOf(client: PoolClient, uuid: string): Promise<PendingUser | undefined> {
    const { rows } = await client.query<PendingRow>(
      `SELECT * FROM ${this.#names.quarantine} WHERE uuid = $1`,
      [uuid],
    );
    return rows[0] && toPending(rows[0]);
  }

  async pend(client: PoolClient, pending: PendingUser): Promise<void> {
    await client.query(
      `INSERT INTO ${this.#names.quarantine} (operation, patch, reason, fields, awaits, since, attempts, messages, uuid)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
      ON CONFLICT (uuid) DO UPDATE SET operation = excluded.operation, patch = excluded.patch,
        reason = excluded.reason, fields = excluded.fields, awaits = excluded.awaits,
        attempts = excluded.attempts, messages = excluded.messages`,
      pendingColumns(pending),
    );
    await client.query(`DELETE FROM ${this.#names.awaits} WHERE uuid = $1`, [pending.uuid]);
    if (pending.awaits.length > 0) {
      await client.query(
        `INSERT INTO ${this.#names.awaits} (field, value, uuid)
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
  async unpend(client: PoolClient, uuid: string): Promise<void> {
    await client.query(`DELETE FROM ${this.#names.quarantine} WHERE uuid = $1`, [uuid]);
    await client.query(`DELETE FROM ${this.#names.awaits} WHERE uuid = $1`, [uuid]);
  }

  /**
   * For each value of `freed`, and each of `passed` (what the step's uuid awaited) that no active
   * user holds now, the oldest pending uuid awaiting it but `self`: one per value, since the
   * first that takes it holds it again; one that does not passes it on in its own step.
   */
  async waiters(
    client: PoolClient,
    freed: AwaitedValue[],
    self: string,
    passed: AwaitedValue[] = [],
  ): Promise<string[]> {
    if (freed.length === 0 && passed.length === 0) return [];
    await this.lockAwaits(client);
    const values = [...freed];
    for (const awaited of passed) {
      const field = awaited.field as UniqueField;
      if (!this.#unique.includes(field)) continue;
      const column = userWireNames[field];
      const key = field === "email" ? `lower(${column} COLLATE "C")` : column;
      const { rowCount } = await client.query(
        `SELECT 1 FROM ${this.#names.table} WHERE ${key} = $1 AND deactivated_at IS NULL LIMIT 1`,
        [awaited.value],
      );
      if ((rowCount ?? 0) === 0) values.push(awaited);
    }
    if (values.length === 0) return [];
    const { rows } = await client.query<{ uuid: string; seq: string }>(
      `SELECT DISTINCT ON (a.field, a.value) a.uuid, q.seq FROM ${this.#names.awaits} a
      JOIN ${this.#names.quarantine} q ON q.uuid = a.uuid
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
   * cycle and aborts one step, which the store's step (`#locked`) runs again.
   */
  async lockAwaits(client: PoolClient): Promise<void> {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `${this.#names.lockKey}:awaits`,
    ]);
  }
}
