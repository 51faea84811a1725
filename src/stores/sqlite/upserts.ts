// The SQLite store's upsert: one statement per write, atomic across connections and processes,
// two statements per shape of patch, prepared when the shape is first met.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { UpsertResult, UserFieldName, UserPatch } from "../../users/user-record.ts";
import { nulRefused, toUser } from "./rows.ts";
import { fields, type Row, table } from "./schema.ts";

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

/** The upsert statements of one database, by patch shape. */
export class UpsertStatements {
  readonly #db: DatabaseSync;
  // The statements of each patch shape met so far (see statementsSql), prepared once.
  readonly #statements = new Map<number, { insert: StatementSync; merge: StatementSync }>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Upserts `patch`; a unique index's violation is thrown as SQLite reports it. With `insertOnly`,
   * only creates: undefined, and nothing written, when the uuid is stored already.
   */
  write(patch: UserPatch): UpsertResult;
  write(patch: UserPatch, insertOnly: true): UpsertResult | undefined;
  write(patch: UserPatch, insertOnly = false): UpsertResult | undefined {
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
    if (insertOnly) return undefined;
    // The user exists: merge. The merge is a whole upsert on its own, so if another process has
    // deleted the user since the insert, it creates it again and says so.
    if (keys !== undefined) values.push(keys);
    // all(), not get(): get() stops at the returned row and resets the statement, which commits
    // there, and node:sqlite ignores the reset's result: a failed commit would be reported as
    // stored. (SQLite also skips its WAL hook then: no automatic checkpoint.)
    const row = statements.merge.all(...values)[0] as Row;
    return { created: row.revision === 1, user: toUser(row) };
  }
}
