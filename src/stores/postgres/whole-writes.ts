// PostgresUserStore's whole-record write and look-ups (UserStore.replace, UserStoreReads.findUsers),
// for a second protocol over the same store (SCIM): each one SQL statement, bound to parameters.

import { indexedExtraPath } from "../../users/store-rules.ts";
import type { UserFieldName } from "../../users/user-record.ts";
import { userFieldNames, userWireNames } from "../../users/user-record.ts";
import type { UserExtraMatch, UserLookup, UserPageOptions } from "../../users/user-store.ts";

const fields = userFieldNames.map((field) => [field, userWireNames[field]] as const);
const columns = `uuid, ${fields.map(([, column]) => column).join(", ")}, extra, deactivated_at`;

/**
 * The statement that writes a user whole, bound to the record as jsonb ($1): every column as the
 * record says (an absent field cleared), `extra` its top-level non-null values, `deactivated_at`
 * as given. One INSERT ... ON CONFLICT DO UPDATE: PostgreSQL locks the row, and the partial
 * unique indexes (over active users) refuse a value another active user holds.
 */
export function replaceStatement(table: string): string {
  return `INSERT INTO ${table} AS stored (${columns})
VALUES (
  $1::jsonb ->> 'uuid',
  ${fields.map(([field]) => `$1::jsonb ->> '${field}'`).join(",\n  ")},
  (SELECT jsonb_object_agg(key, value) FROM jsonb_each(coalesce($1::jsonb -> 'extra', '{}'))
    WHERE jsonb_typeof(value) <> 'null'),
  $1::jsonb ->> 'deactivatedAt'
)
ON CONFLICT (uuid) DO UPDATE SET
  ${fields.map(([, column]) => `${column} = excluded.${column}`).join(",\n  ")},
  extra = excluded.extra,
  deactivated_at = excluded.deactivated_at
RETURNING ${columns}`;
}

/**
 * The conditional whole write: one UPDATE of the row whose every column still equals the expected
 * record ($2, as jsonb; `extra` compared as jsonb, so key order does not count), to `$1` as
 * {@link replaceStatement} writes it. Under READ COMMITTED, PostgreSQL re-evaluates the WHERE on
 * the row a concurrent write left, so two such writes of one read cannot both succeed.
 */
export function conditionalReplaceStatement(table: string): string {
  return `UPDATE ${table} AS stored SET
  ${fields.map(([field, column]) => `${column} = $1::jsonb ->> '${field}'`).join(",\n  ")},
  extra = (SELECT jsonb_object_agg(key, value) FROM jsonb_each(coalesce($1::jsonb -> 'extra', '{}'))
    WHERE jsonb_typeof(value) <> 'null'),
  deactivated_at = $1::jsonb ->> 'deactivatedAt'
WHERE uuid = $1::jsonb ->> 'uuid' AND uuid = $2::jsonb ->> 'uuid'
  AND ${fields.map(([field, column]) => `${column} IS NOT DISTINCT FROM $2::jsonb ->> '${field}'`).join("\n  AND ")}
  AND coalesce(extra, '{}'::jsonb) = coalesce($2::jsonb -> 'extra', '{}'::jsonb)
  AND deactivated_at IS NOT DISTINCT FROM $2::jsonb ->> 'deactivatedAt'
RETURNING ${columns}`;
}

/**
 * The expression of the indexed `extra` path (indexedExtraPath, SCIM's externalId), its keys
 * written into the SQL: an expression index serves only a query that spells it the same, which a
 * path bound as a parameter never does. The keys are this package's constants, with no quote.
 */
export const indexedExtraSql = `(extra -> '${indexedExtraPath[0]}' ->> '${indexedExtraPath[1]}')`;

/**
 * The query of a look-up and its parameters. A field is checked against the record's fields (it
 * names a column); `extra`'s keys are bound, but for the indexed path (indexedExtraSql). `lower()` under the "C" collation changes ASCII
 * letters only, the stores' one case rule.
 */
export function findQuery(table: string, lookup: UserLookup): { text: string; values: string[] } {
  const compare = (expression: string, parameter: string) =>
    lookup.ignoreCase
      ? `lower((${expression}) COLLATE "C") = lower(${parameter} COLLATE "C")`
      : `${expression} = ${parameter}`;
  if ("field" in lookup) {
    if (!(userFieldNames as readonly string[]).includes(lookup.field)) {
      throw new TypeError(
        `findUsers: ${JSON.stringify(lookup.field)} is not a field of a user record`,
      );
    }
    const column = userWireNames[lookup.field as UserFieldName];
    return {
      text: `SELECT ${columns} FROM ${table} WHERE ${compare(column, "$1::text")} ORDER BY uuid`,
      values: [lookup.value],
    };
  }
  const [outer, inner] = lookup.extra;
  if (!lookup.ignoreCase && outer === indexedExtraPath[0] && inner === indexedExtraPath[1]) {
    return {
      text: `SELECT ${columns} FROM ${table} WHERE ${indexedExtraSql} = $1::text ORDER BY uuid`,
      values: [lookup.value],
    };
  }
  return {
    text: `SELECT ${columns} FROM ${table} WHERE ${compare("extra -> $2::text ->> $3::text", "$1::text")} ORDER BY uuid`,
    values: [lookup.value, outer, inner],
  };
}

/**
 * The query of a page of users ordered by uuid, each row with the total the options take in
 * (`count(*) OVER ()`, counted before LIMIT and OFFSET, so page and total come from one snapshot),
 * and the query of that total alone, for a page past the end, which has no row to carry it.
 */
export function pageQueries(
  table: string,
  { offset = 0, limit, includeDeactivated = false }: UserPageOptions,
): { page: string; total: string; values: unknown[] } {
  const { where, values } = pageCondition(includeDeactivated);
  const at = values.length;
  return {
    page: `SELECT ${columns}, count(*) OVER () AS page_total FROM ${table} WHERE ${where} ORDER BY uuid LIMIT $${at + 1}::bigint OFFSET $${at + 2}::bigint`,
    total: `SELECT count(*)::int AS page_total FROM ${table} WHERE ${where}`,
    values: [...values, limit, offset],
  };
}

/** The WHERE of a page's users: active ones, and which deactivated ones the options take in. */
function pageCondition(include: boolean | UserExtraMatch): { where: string; values: string[] } {
  if (include === true) return { where: "true", values: [] };
  if (include === false) return { where: "deactivated_at IS NULL", values: [] };
  // Compared as jsonb: `false` is the boolean, `"x"` the string.
  return {
    where: "(deactivated_at IS NULL OR extra -> $1::text -> $2::text = $3::jsonb)",
    values: [include.extra[0], include.extra[1], JSON.stringify(include.value)],
  };
}
