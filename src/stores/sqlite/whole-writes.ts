// SqliteUserStore's whole-record write and look-ups (UserStore.replace, UserStoreReads.findUsers),
// for a second protocol over the same store (SCIM): each one SQL statement, prepared once.
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { UserFieldName, UserRecord } from "../../users/user-record.ts";
import { userFieldNames, userWireNames } from "../../users/user-record.ts";
import type { UserLookup } from "../../users/user-store.ts";

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
  const finds = new Map<string, StatementSync>();

  function find(key: string, where: string): StatementSync {
    let statement = finds.get(key);
    if (statement === undefined) {
      statement = db.prepare(`SELECT * FROM ${table} WHERE ${where} ORDER BY rowid`);
      finds.set(key, statement);
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
      const compare = (expression: string) =>
        lookup.ignoreCase ? `lower(${expression}) = lower(?)` : `${expression} = ?`;
      if ("field" in lookup) {
        if (!(userFieldNames as readonly string[]).includes(lookup.field)) {
          throw new TypeError(
            `findUsers: ${JSON.stringify(lookup.field)} is not a field of a user record`,
          );
        }
        const column = userWireNames[lookup.field as UserFieldName];
        const key = `${column}:${lookup.ignoreCase === true}`;
        return (find(key, compare(column)).all(lookup.value) as Row[]).map(toUser);
      }
      const [outer, inner] = lookup.extra;
      // Both keys are bound as JSON paths with a quoted label (`$."scim"`), never spliced into SQL.
      const statement = find(`extra:${lookup.ignoreCase === true}`, compare("extra -> ? ->> ?"));
      return (
        statement.all(
          `$.${JSON.stringify(outer)}`,
          `$.${JSON.stringify(inner)}`,
          lookup.value,
        ) as Row[]
      )
        .filter((row) => typeof row.extra === "string")
        .map(toUser);
    },
  };
}
