// SqliteUserStore's whole-record write, look-ups and pages (UserStore.replace,
// UserStoreReads.findUsers and listPage), for a second protocol over the same store (SCIM): each
// one SQL statement, prepared once.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { indexedExtraPath } from "../../users/store-rules.ts";
import type { UserFieldName, UserRecord } from "../../users/user-record.ts";
import { userFieldNames, userWireNames } from "../../users/user-record.ts";
import type {
  UserExtraMatch,
  UserLookup,
  UserPage,
  UserPageOptions,
} from "../../users/user-store.ts";
import { extraKeyPath, indexedExtraSql } from "./schema.ts";

type Row = Record<string, string | number | null>;

/** What the store hands over: its database, table, and its row reading and conflict mapping. */
export interface WholeWritesContext {
  db: DatabaseSync;
  table: string;
  toUser(row: Row): UserRecord;
  /** The UserConflictError a failed statement stands for, or undefined. */
  conflictOf(error: unknown): Error | undefined;
  /** Throws for a value node:sqlite would read back cut short (U+0000). */
  checkText(what: string, value: string): void;
}

/** The two operations over one table. */
export function createWholeWrites({
  db,
  table,
  toUser,
  conflictOf,
  checkText,
}: WholeWritesContext) {
  const columns = userFieldNames.map((field) => userWireNames[field]);
  const written = ["uuid", ...columns, "extra", "deactivated_at"];
  // revision starts again at 1 when the write reactivates a row, as the upsert's does.
  const replace = db.prepare(`INSERT INTO ${table} (${written.join(", ")})
VALUES (${written.map(() => "?").join(", ")})
ON CONFLICT (uuid) DO UPDATE SET ${[...columns, "extra", "deactivated_at"].map((column) => `${column} = excluded.${column}`).join(", ")},
  revision = revision + 1
RETURNING *`);
  const statements = new Map<string, StatementSync>();

  function prepared(sql: string): StatementSync {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  }

  return {
    replace(user: UserRecord): UserRecord {
      checkText("uuid", user.uuid);
      const values: (string | null)[] = [user.uuid];
      for (const field of userFieldNames) {
        const value = user[field];
        if (typeof value === "string") checkText(field, value);
        values.push(typeof value === "string" ? value : null);
      }
      const extra = user.extra;
      // JSON text, not an object: `__proto__` stays a plain key.
      const keys =
        extra === undefined ? [] : Object.keys(extra).filter((key) => extra[key] !== null);
      values.push(
        extra === undefined || keys.length === 0
          ? null
          : `{${keys.map((key) => `${JSON.stringify(key)}:${JSON.stringify(extra[key])}`).join(",")}}`,
      );
      values.push(user.deactivatedAt ?? null);
      try {
        // all(), not get(): see the upsert (a failed commit must not read as stored).
        return toUser(replace.all(...values)[0] as Row);
      } catch (error) {
        throw conflictOf(error) ?? error;
      }
    },

    findUsers(lookup: UserLookup): UserRecord[] {
      const { text, values } = findQuery(table, lookup);
      return (prepared(text).all(...values) as Row[]).map(toUser);
    },

    listPage({ offset = 0, limit, includeDeactivated = false }: UserPageOptions): UserPage {
      const { where, values } = pageCondition(includeDeactivated);
      // The total in the same statement, so that page and total come from one snapshot; a page
      // past the end has no row to carry it, and is counted alone.
      const rows = prepared(
        `SELECT *, (SELECT count(*) FROM ${table} WHERE ${where}) AS page_total FROM ${table} WHERE ${where} ORDER BY rowid LIMIT ? OFFSET ?`,
      ).all(...values, ...values, limit, offset) as Row[];
      const total =
        rows[0] === undefined
          ? (
              prepared(`SELECT count(*) AS page_total FROM ${table} WHERE ${where}`).get(
                ...values,
              ) as Row
            ).page_total
          : rows[0].page_total;
      return { users: rows.map(toUser), total: Number(total) };
    },
  };
}

/**
 * The statement of a look-up and its parameters. A field is checked against the record's fields
 * (it names a column); `extra`'s keys are bound as quoted JSON path labels, never spliced into
 * SQL, except for the indexed path, written as its index is (indexedExtraSql).
 */
export function findQuery(table: string, lookup: UserLookup): { text: string; values: string[] } {
  const compare = (expression: string) =>
    lookup.ignoreCase ? `lower(${expression}) = lower(?)` : `${expression} = ?`;
  const select = (where: string) => `SELECT * FROM ${table} WHERE ${where} ORDER BY rowid`;
  if ("field" in lookup) {
    if (!(userFieldNames as readonly string[]).includes(lookup.field)) {
      throw new TypeError(
        `findUsers: ${JSON.stringify(lookup.field)} is not a field of a user record`,
      );
    }
    const column = userWireNames[lookup.field as UserFieldName];
    return { text: select(compare(column)), values: [lookup.value] };
  }
  const [outer, inner] = lookup.extra;
  if (!lookup.ignoreCase && outer === indexedExtraPath[0] && inner === indexedExtraPath[1]) {
    return { text: select(compare(indexedExtraSql)), values: [lookup.value] };
  }
  return {
    text: select(compare("extra -> ? ->> ?")),
    values: [extraKeyPath(outer), extraKeyPath(inner), lookup.value],
  };
}

/** The WHERE of a page's users: active ones, and which deactivated ones the options take in. */
function pageCondition(include: boolean | UserExtraMatch): { where: string; values: string[] } {
  if (include === true) return { where: "1", values: [] };
  if (include === false) return { where: "deactivated_at IS NULL", values: [] };
  // A boolean as its JSON text (`->` gives `true` or `false`); a string as SQL text (`->>` gives
  // a JSON string's text, and a number as a number, which equals no text).
  const boolean = typeof include.value === "boolean";
  return {
    where: `(deactivated_at IS NULL OR extra -> ? ${boolean ? "->" : "->>"} ? = ?)`,
    values: [
      extraKeyPath(include.extra[0]),
      extraKeyPath(include.extra[1]),
      boolean ? String(include.value) : (include.value as string),
    ],
  };
}
