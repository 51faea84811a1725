// The PostgreSQL store's names: its tables (quoted, in a schema), the quarantine's tables beside
// them, the unique indexes and the advisory lock keys, each derived once from the options.
import type { UniqueField } from "../../users/store-rules.ts";
import { userWireNames } from "../../users/user-record.ts";

/** The SQL names one store uses. */
export interface StoreNames {
  /** The users table, quoted (with its schema, if given). */
  table: string;
  /** The quarantine's pending records and their awaited values, quoted. */
  quarantine: string;
  awaits: string;
  /** The key of the advisory locks every replica of this table shares. */
  lockKey: string;
  /** The unique indexes' names (unquoted), each with its field. */
  indexes: Map<string, UniqueField>;
  /** A short hash of the table's name, for the names of its other objects. */
  indexSuffix: string;
}

/** The names of a store over `table` (default `provisioned_users`) in `schema`. */
export function storeNames(
  options: {
    table?: string | undefined;
    schema?: string | undefined;
    quarantineTable?: string | undefined;
  },
  unique: readonly UniqueField[],
): StoreNames {
  const { table = "provisioned_users", schema } = options;
  const inSchema = (name: string) =>
    schema === undefined ? quote(name) : `${quote(schema)}.${quote(name)}`;
  const quoted = inSchema(table);
  const hash = fnv1a(quoted);
  const quarantine =
    options.quarantineTable ??
    (byteLength(`${table}_quarantine`) <= 63 ? `${table}_quarantine` : `pi_quarantine_${hash}`);
  return {
    table: quoted,
    quarantine: inSchema(quarantine),
    awaits: inSchema(
      byteLength(`${quarantine}_awaits`) <= 63 ? `${quarantine}_awaits` : `pi_awaits_${hash}`,
    ),
    lockKey: `platform-integration:${quoted}`,
    indexes: new Map(unique.map((field) => [`pi_unique_${userWireNames[field]}_${hash}`, field])),
    indexSuffix: hash,
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
export function quote(name: string): string {
  if (name === "" || name.includes("\0") || new TextEncoder().encode(name).length > 63) {
    throw new TypeError(
      `A table or schema name must be 1 to 63 bytes of UTF-8 without U+0000, not ${JSON.stringify(name)}`,
    );
  }
  return `"${name.replaceAll('"', '""')}"`;
}
