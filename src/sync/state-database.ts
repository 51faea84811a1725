// The acknowledged state's SQLite file: its schema and locking, the identity that binds it to one
// directory and target, and every query the state makes. What the queries mean is
// acknowledged-state.ts's; the journal in front of the file is state-journal.ts's.
import { chmodSync, statSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { JsonValue } from "type-fest";
import { redactUrl } from "../internal/url.ts";

/** A user record in wire form, as the application acknowledged it. */
export type AcknowledgedRecord = Record<string, JsonValue>;

/** What the state file belongs to; another sync must not reuse it (see `openState`). */
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
 * A file of the sync's own (the state file, its journal of acknowledgements, its password-digest
 * key) cannot be read or written: not the directory's failure nor the application's, and retrying
 * does not fix it. The message names the file, what failed and the fix.
 */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
  /** The file that failed. */
  readonly path: string;
  constructor(message: string, { path, cause }: { path: string; cause?: unknown }) {
    super(message, { cause });
    this.path = path;
  }
}

/**
 * Makes one of the sync's own files readable by its owner alone, once it is known to be a regular
 * file: a path that leads to a device or a folder (a link to /dev/null, say) is refused, since
 * writes there vanish, and changing its mode would change the device's for every user of the
 * machine.
 */
export function restrictToOwner(path: string): void {
  if (!statSync(path).isFile()) {
    throw new Error(
      "it is not a regular file (a device, a folder or a link to one): the sync keeps its state, -acks and -key files as regular files of their own",
    );
  }
  chmodSync(path, 0o600);
}

/**
 * Runs `work` on one of the sync's own files, telling a failure as a {@link StateFileError}: what
 * the file is (`what`), its path, the system's reason, and `fix`.
 */
export function onStateFile<T>(what: string, path: string, fix: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof StateFileError || error instanceof StateMismatchError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    if (diskFull(error)) {
      throw new StateFileError(
        `The directory sync's ${what} ${path} failed: disk full (${reason}). Make room on the disk that holds it, or move the state file with its -acks and -key files to a disk with room; what was acknowledged is kept, and the next run resumes there. This is the sync's own file, not the directory's nor the application's.`,
        { path, cause: error },
      );
    }
    throw new StateFileError(
      `The directory sync's ${what} ${path} failed (${reason}): ${fix}. This is the sync's own file, not the directory's nor the application's.`,
      { path, cause: error },
    );
  }
}

/** SQLITE_FULL (13) from node:sqlite, or ENOSPC from a file write. */
function diskFull(error: unknown): boolean {
  const { errcode, code } = (error ?? {}) as { errcode?: unknown; code?: unknown };
  return (typeof errcode === "number" && (errcode & 0xff) === 13) || code === "ENOSPC";
}

/**
 * Runs `work` in a transaction. SQLite rolls some failures back itself (SQLITE_FULL, SQLITE_IOERR,
 * SQLITE_NOMEM): a ROLLBACK then fails with "no transaction is active", which must not hide the
 * failure that matters.
 */
export function inTransaction(db: DatabaseSync, work: () => void): void {
  db.exec("BEGIN");
  try {
    work();
    db.exec("COMMIT");
  } catch (error) {
    if (db.isTransaction) {
      try {
        db.exec("ROLLBACK");
      } catch {
        // The failure of the work is the one to tell.
      }
    }
    throw error;
  }
}

/** What to do when the state file itself fails. */
export const stateFileFix =
  "it must be a SQLite file (or absent) that this user can read and write, on a disk with room: fix its permissions, restore it from a backup, or move it away (with its -acks and -key files) to start again with an initial sync";

/** The state file's rows: each user's acknowledged record (JSON), and a few named values. */
export interface StateDatabase {
  /** A user's record as stored: its JSON, `null` when it is to be sent whole again, or undefined. */
  record(uuid: string): string | null | undefined;
  hasRows(): boolean;
  count(): number;
  /** Writes records (undefined: the user is forgotten) in one transaction. */
  apply(entries: Iterable<readonly [string, string | undefined]>): void;
  /**
   * Marks every record to be sent whole again and clears the cookie and (unless `keepRequest`) the
   * re-sync request; with `reset`, first forgets the users the last scan did not see (a reset
   * removed them) and clears the marks of a reset in flight and of a state taken over.
   */
  forgetContents(options?: { reset?: boolean; keepRequest?: boolean }): void;
  readMeta(key: MetaKey): string | undefined;
  writeMeta(key: MetaKey, value: string | undefined): void;
  /** Starts collecting the uuids a read sees; {@link unseen} lists the rows it did not. */
  beginScan(): void;
  markSeen(uuids: readonly string[]): void;
  unseen(): Generator<string>;
  unseenCount(): number;
  holderOf(username: string, except: string): string | undefined;
  close(): void;
}

/** The state file's named values: the re-sync request, the cookie, the delete guard's window. */
export type MetaKey = "resync" | "changeCookie" | "deleteWindow" | "resetInFlight" | "heldUnknown";

const schema = `
CREATE TABLE IF NOT EXISTS acknowledged (uuid TEXT PRIMARY KEY NOT NULL, record TEXT) STRICT;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
`;

/**
 * Opens (or creates, readable by its owner only) the state file, locked for this sync alone, and
 * binds it to `identity` (see {@link checkIdentity}).
 */
export function openStateDatabase(
  path: string,
  identity: StateIdentity,
  adopt: boolean,
): StateDatabase {
  const db = onStateFile("state file", path, stateFileFix, () => new DatabaseSync(path));
  try {
    if (path !== ":memory:") {
      onStateFile("state file", path, stateFileFix, () => restrictToOwner(path));
    }
    // An exclusive lock: two syncs sharing one state file would send each change twice, and a
    // commit without the shared-memory lock costs about half. A checkpoint every 10,000 pages
    // rather than 1,000, as a cycle commits once per message.
    db.exec(
      "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 10000;",
    );
    db.exec(schema);
    checkIdentity(db, identity, adopt, path);
  } catch (error) {
    db.close();
    if (error instanceof Error && /locked|busy/i.test(error.message)) {
      throw new StateFileError(
        `The state file ${path} is in use by another sync: run one at a time`,
        { path, cause: error },
      );
    }
    return onStateFile("state file", path, stateFileFix, () => {
      throw error;
    });
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
  const transaction = (work: () => void) => inTransaction(db, work);

  return {
    record: (uuid) => (select.get(uuid) as { record: string | null } | undefined)?.record,
    hasRows: () => (anyRow.get() as { found: number }).found === 1,
    count: () => (countRows.get() as { n: number }).n,
    apply(entries) {
      transaction(() => {
        for (const [uuid, record] of entries) {
          if (record === undefined) remove.run(uuid);
          else upsert.run(uuid, record);
        }
      });
    },
    forgetContents({ reset = false, keepRequest = false } = {}) {
      transaction(() => {
        if (reset) {
          db.exec("DELETE FROM acknowledged WHERE uuid NOT IN (SELECT uuid FROM seen)");
          removeMeta.run("resetInFlight");
          removeMeta.run("heldUnknown");
        }
        db.exec("UPDATE acknowledged SET record = NULL");
        if (!keepRequest) writeMeta.run("resync", "false");
        removeMeta.run("changeCookie");
      });
    },
    readMeta: (key) => (readMeta.get(key) as { value: string } | undefined)?.value,
    writeMeta(key, value) {
      if (value === undefined) removeMeta.run(key);
      else writeMeta.run(key, value);
    },
    beginScan() {
      db.exec("DELETE FROM seen");
    },
    markSeen(uuids) {
      transaction(() => {
        for (const uuid of uuids) insertSeen.run(uuid);
      });
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
    unseenCount: () => (countUnseen.get() as { n: number }).n,
    holderOf: (username, except) =>
      (selectHolder.get(username, except) as { uuid: string } | undefined)?.uuid,
    close: () => db.close(),
  };
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
    const raw = (read.get(key) as { value: string } | undefined)?.value;
    // A value an earlier version kept raw (an LDAP URL with a password or a query) is compared,
    // shown and kept again without them.
    const stored = raw === undefined ? undefined : redactIdentity(raw);
    const wanted = redactIdentity(identity[key]);
    const sameWithFilter = key === "source" && stored?.startsWith(`${wanted} (`) === true;
    const another = stored !== undefined && stored !== wanted && !holdsNothing;
    if (another && !sameWithFilter && !adopt) {
      throw new StateMismatchError(
        `The state file ${path} belongs to the ${key} ${stored}, not ${wanted}: ` +
          "give the sync the state file of this directory and application, or take this one over " +
          "with a full re-sync (requestResync(), sync --full): it creates every user the directory " +
          "returns. A reset (POST /v1/reset) from a file taken over from another application is " +
          "refused unless allowDeleteAll, as the file does not say which users that application holds",
      );
    }
    // Taken over from another application: its users say nothing of what this one holds.
    if (another && key === "target") write.run("heldUnknown", "true");
    write.run(key, wanted);
  }
}

/** An identity as it is kept and shown: its URL (the first word) without credentials or query. */
function redactIdentity(value: string): string {
  const space = value.indexOf(" ");
  return space === -1
    ? redactUrl(value)
    : `${redactUrl(value.slice(0, space))}${value.slice(space)}`;
}
