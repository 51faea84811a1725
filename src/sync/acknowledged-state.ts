import { createHash, createHmac, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { JsonValue } from "type-fest";

/** A user record in wire form, as the application acknowledged it. */
export type WireRecord = Record<string, JsonValue>;

/** What the state file belongs to; another sync must not reuse it (see {@link openState}). */
export interface StateIdentity {
  /** The directory: its URL, base DN and filter, or a custom source's name. */
  source: string;
  /** The Provisioning API's base URL, or "in-process". */
  target: string;
}

/** Thrown when a state file belongs to another directory or target: retrying cannot fix it. */
export class StateMismatchError extends Error {
  override readonly name = "StateMismatchError";
}

/**
 * The sync's acknowledged state (what the platform calls its cookie): for each user the
 * application acknowledged, the record it holds, so that a cycle sends only what changed since.
 * One SQLite row per user. Each acknowledgement is written
 * before the next message goes, so a killed process resumes where it stopped: at worst it resends
 * the one message that was in flight. It is appended to a journal beside the database (one
 * `write`, a few microseconds, where a SQLite commit costs tens) and folded into the database
 * ten thousand at a time, when a cycle starts, when the state is closed, and when it is opened
 * again. Neither is fsynced (WAL with synchronous=NORMAL): a write survives the process being
 * killed; a power loss may undo the last few, and losing an acknowledgement only means its message
 * is sent again, which the Provisioning API takes (delivery is at least once).
 *
 * A password is kept only as an HMAC-SHA256 under a random key of the state's own, kept in another
 * file (`PATH-key`, readable by its owner only): enough to tell that it changed, and the state file
 * alone (a backup, a copy) gives nothing to test guesses against. A digest that an earlier version
 * kept (unsalted SHA-256) is replaced, without a message, in the first cycle that finds the
 * password unchanged.
 */
export interface AcknowledgedState {
  /** The acknowledged record; `null` when the user was acknowledged but is to be sent whole again. */
  get(uuid: string): WireRecord | null | undefined;
  acknowledge(record: WireRecord): void;
  forget(uuid: string): void;
  /** How many users the application holds, as far as the state knows. */
  count(): number;
  /** Marks every user to be created again, in the same transaction that clears the request. */
  forgetContents(): void;
  /** A full re-sync asked for and not yet started: it survives a restart. */
  resyncRequested: boolean;
  /**
   * The Content Sync cookie of the last cycle that completed, and the scope it covers; cleared
   * with the contents, as a cookie is only worth the acknowledged records it describes.
   */
  changeCookie: { scope: string; cookie: string } | undefined;
  /** Starts collecting the uuids a read of the directory sees, for {@link unseen}. */
  beginScan(): void;
  markSeen(uuids: readonly string[]): void;
  /** The acknowledged users the last scan did not see, in pages, safe to forget while iterating. */
  unseen(): Generator<string>;
  /** How many acknowledged users the last scan did not see. */
  unseenCount(): number;
  /**
   * The record with its password replaced by the digest the state keeps; compared with `before`,
   * a record whose digest an earlier version made, by that digest.
   */
  protect(record: WireRecord, before?: WireRecord): WireRecord;
  /** Whether a record's password digest is of an earlier version's kind, to be rewritten. */
  outdated(record: WireRecord): boolean;
  /** Another acknowledged user whose username is `username`, if any. */
  holderOf(username: string, except: string): string | undefined;
  /** Records that the application renamed an acknowledged user, its other fields unchanged. */
  rename(uuid: string, username: string): void;
  close(): void;
}

const schema = `
CREATE TABLE IF NOT EXISTS acknowledged (uuid TEXT PRIMARY KEY NOT NULL, record TEXT) STRICT;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
`;

/**
 * Acknowledgements journaled since the last fold, before they are folded into the database. A
 * fold's page writes are shared by its rows: 10,000 a fold cost 6.0 µs of CPU an acknowledgement
 * against 7.9 µs at 1,000 (100,000 random uuids), for about 3 MB of records held until then.
 */
const foldEvery = 10_000;

/**
 * Opens (or creates, readable by its owner only) the state file of a sync, and its journal of
 * acknowledgements (`PATH-acks`; none for `:memory:`). Throws a
 * {@link StateMismatchError} when the file belongs to another source or target, unless `adopt`
 * (a full re-sync, which rebuilds the application's users from the directory, takes it over).
 */
export function openState(
  path: string,
  identity: StateIdentity,
  { adopt = false }: { adopt?: boolean } = {},
): AcknowledgedState {
  const db = new DatabaseSync(path);
  try {
    if (path !== ":memory:") chmodSync(path, 0o600);
    // An exclusive lock: two syncs sharing one cookie would send each change twice, and a commit
    // without the shared-memory lock costs about half. A checkpoint every 10,000 pages rather
    // than 1,000, as a cycle commits once per message.
    db.exec(
      "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 10000;",
    );
    db.exec(schema);
    checkIdentity(db, identity, adopt, path);
  } catch (error) {
    db.close();
    if (error instanceof Error && /locked|busy/i.test(error.message)) {
      throw new Error(`The state file ${path} is in use by another sync: run one at a time`, {
        cause: error,
      });
    }
    throw error;
  }
  const statement = (sql: string): StatementSync => db.prepare(sql);
  const select = statement("SELECT record FROM acknowledged WHERE uuid = ?");
  const upsert = statement(
    "INSERT INTO acknowledged (uuid, record) VALUES (?, ?) ON CONFLICT (uuid) DO UPDATE SET record = excluded.record",
  );
  const remove = statement("DELETE FROM acknowledged WHERE uuid = ?");
  const countRows = statement("SELECT count(*) AS n FROM acknowledged");
  const anyRow = statement("SELECT EXISTS (SELECT 1 FROM acknowledged) AS found");
  const readMeta = statement("SELECT value FROM meta WHERE key = ?");
  const writeMeta = statement(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  const removeMeta = statement("DELETE FROM meta WHERE key = ?");
  db.exec("CREATE TEMP TABLE seen (uuid TEXT PRIMARY KEY NOT NULL) STRICT");
  const insertSeen = statement("INSERT OR IGNORE INTO seen (uuid) VALUES (?)");
  // Keyset pages, so that forgetting a user while the pages are read cannot skip another.
  const unseenPage = statement(
    "SELECT uuid FROM acknowledged WHERE uuid > ? AND uuid NOT IN (SELECT uuid FROM seen) ORDER BY uuid LIMIT 500",
  );
  const countUnseen = statement(
    "SELECT count(*) AS n FROM acknowledged WHERE uuid NOT IN (SELECT uuid FROM seen)",
  );
  const selectHolder = statement(
    "SELECT uuid FROM acknowledged WHERE json_extract(record, '$.username') = ? AND uuid <> ? LIMIT 1",
  );
  // Made on first use: a sync without passwords has no key file.
  let key: Buffer | undefined;
  const legacyPrefix = "sha256:";
  const protect = (record: WireRecord, before?: WireRecord): WireRecord => {
    if (typeof record.password !== "string") return record;
    const legacy = typeof before?.password === "string" && before.password.startsWith(legacyPrefix);
    if (legacy) {
      const digest = createHash("sha256").update(record.password).digest("hex");
      return { ...record, password: `${legacyPrefix}${digest}` };
    }
    key ??= passwordKey(path);
    const digest = createHmac("sha256", key).update(record.password).digest("hex");
    return { ...record, password: `hmac-sha256:${digest}` };
  };

  // What the journal holds and the database does not yet: a record's JSON, or undefined for a
  // user forgotten. Its lines are `[uuid, record]` and `[uuid]`, in the order they happened, the
  // record's JSON written as it is rather than as a string within a string: escaping each of its
  // quotes again cost more than the rest of the line.
  const journaled = new Map<string, string | undefined>();
  // An initial sync asks about each user before its create: while the database holds no row, the
  // journal alone answers, without a SQLite lookup a message (4 % of the delivering thread's CPU).
  const rowsExist = () => (anyRow.get() as { found: number }).found === 1;
  let databaseHasRows = rowsExist();
  const journalPath = path === ":memory:" ? undefined : `${path}-acks`;
  const fold = () => {
    if (journaled.size === 0) return;
    db.exec("BEGIN");
    try {
      // In the index's order: each row lands near the last, in pages already in SQLite's cache.
      for (const [uuid, record] of [...journaled].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (record === undefined) remove.run(uuid);
        else upsert.run(uuid, record);
      }
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
    journaled.clear();
    databaseHasRows = rowsExist();
    // Folded lines applied again after a crash here change nothing: each sets a user's value.
    if (journal !== undefined) ftruncateSync(journal, 0);
  };
  let journal: number | undefined;
  if (journalPath !== undefined) {
    try {
      journal = openJournal(journalPath, journaled);
      fold();
    } catch (error) {
      if (journal !== undefined) closeSync(journal);
      db.close();
      throw error;
    }
  }
  const note = (uuid: string, record: string | undefined) => {
    if (journal !== undefined) {
      const key = JSON.stringify(uuid);
      writeSync(journal, record === undefined ? `[${key}]\n` : `[${key},${record}]\n`);
    }
    journaled.set(uuid, record);
    if (journaled.size >= foldEvery) fold();
  };

  return {
    get(uuid) {
      let text: string | null | undefined;
      if (journaled.has(uuid)) text = journaled.get(uuid);
      else if (!databaseHasRows) return undefined;
      else text = (select.get(uuid) as { record: string | null } | undefined)?.record;
      if (text === undefined) return undefined;
      return text === null ? null : (JSON.parse(text) as WireRecord);
    },
    acknowledge(record) {
      note(record.uuid as string, JSON.stringify(protect(record)));
    },
    forget(uuid) {
      note(uuid, undefined);
    },
    count() {
      fold();
      return (countRows.get() as { n: number }).n;
    },
    forgetContents() {
      fold();
      db.exec("BEGIN");
      try {
        db.exec("UPDATE acknowledged SET record = NULL");
        writeMeta.run("resync", "false");
        removeMeta.run("changeCookie");
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    },
    get resyncRequested() {
      return (readMeta.get("resync") as { value: string } | undefined)?.value === "true";
    },
    set resyncRequested(value) {
      writeMeta.run("resync", String(value));
    },
    get changeCookie() {
      const stored = (readMeta.get("changeCookie") as { value: string } | undefined)?.value;
      return stored === undefined ? undefined : JSON.parse(stored);
    },
    set changeCookie(value) {
      if (value === undefined) removeMeta.run("changeCookie");
      else writeMeta.run("changeCookie", JSON.stringify(value));
    },
    beginScan() {
      fold();
      db.exec("DELETE FROM seen");
    },
    markSeen(uuids) {
      db.exec("BEGIN");
      for (const uuid of uuids) insertSeen.run(uuid);
      db.exec("COMMIT");
    },
    *unseen() {
      let after = "";
      for (;;) {
        const page = unseenPage.all(after) as { uuid: string }[];
        for (const { uuid } of page) yield uuid;
        const last = page.at(-1);
        if (!last) return;
        after = last.uuid;
      }
    },
    unseenCount() {
      return (countUnseen.get() as { n: number }).n;
    },
    protect,
    outdated: (record) =>
      typeof record.password === "string" && record.password.startsWith(legacyPrefix),
    holderOf(username, except) {
      fold();
      return (selectHolder.get(username, except) as { uuid: string } | undefined)?.uuid;
    },
    rename(uuid, username) {
      const text = journaled.has(uuid)
        ? journaled.get(uuid)
        : (select.get(uuid) as { record: string | null } | undefined)?.record;
      if (text === undefined || text === null) return;
      note(uuid, JSON.stringify({ ...(JSON.parse(text) as WireRecord), username }));
    },
    close() {
      try {
        fold();
      } finally {
        if (journal !== undefined) closeSync(journal);
        db.close();
      }
    },
  };
}

/** Opens a journal for appending, its lines read into `journaled` first. */
function openJournal(path: string, journaled: Map<string, string | undefined>): number {
  try {
    replayJournal(readFileSync(path, "utf8"), journaled);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const journal = openSync(path, "a", 0o600);
  chmodSync(path, 0o600);
  return journal;
}

/**
 * Reads a journal into `journaled`. A line cut short (the machine stopped mid-write) ends it: what
 * came after is lost, and those messages are sent again.
 */
function replayJournal(text: string, journaled: Map<string, string | undefined>): void {
  for (const line of text.split("\n")) {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (!Array.isArray(entry) || typeof entry[0] !== "string") return;
    const record: unknown = entry[1];
    if (record === undefined) journaled.set(entry[0], undefined);
    else if (record !== null && typeof record === "object" && !Array.isArray(record)) {
      journaled.set(entry[0], JSON.stringify(record));
    } else return;
  }
}

/**
 * Binds the state file to its directory and target, or refuses another's. A file that holds
 * nothing (no acknowledged user, no cookie: a first run that failed before any answer, against a
 * mistyped URL) is bound to whatever opens it next. The LDAP source's identity once carried the
 * filter too, which may change without a re-sync: such a file is taken over by its URL and base.
 */
function checkIdentity(db: DatabaseSync, identity: StateIdentity, adopt: boolean, path: string) {
  const read = db.prepare("SELECT value FROM meta WHERE key = ?");
  const write = db.prepare(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  );
  const holdsNothing =
    (db.prepare("SELECT EXISTS (SELECT 1 FROM acknowledged) AS found").get() as { found: number })
      .found === 0 && read.get("changeCookie") === undefined;
  for (const key of ["source", "target"] as const) {
    const stored = (read.get(key) as { value: string } | undefined)?.value;
    const sameWithFilter = key === "source" && stored?.startsWith(`${identity.source} (`) === true;
    if (
      stored !== undefined &&
      stored !== identity[key] &&
      !adopt &&
      !holdsNothing &&
      !sameWithFilter
    ) {
      throw new StateMismatchError(
        `The state file ${path} belongs to the ${key} ${stored}, not ${identity[key]}: ` +
          "use another state file, or run a full re-sync to take this one over",
      );
    }
    write.run(key, identity[key]);
  }
}

/**
 * The key of the state's password digests, kept in `PATH-key` (created readable by its owner
 * only), apart from the digests: a copy of the state file alone gives nothing to test guesses
 * against. A state in memory has a key for its life.
 */
function passwordKey(path: string): Buffer {
  if (path === ":memory:") return randomBytes(32);
  const file = `${path}-key`;
  try {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (key.length === 32) return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // A lost key only makes every password look changed once: each is sent again.
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}
