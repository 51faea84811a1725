// The journal in front of the acknowledged state's database: each acknowledgement is one
// `write` to a file beside it, where a SQLite commit would cost tens of times more, and the
// journal is folded into the database in batches (acknowledged-state.ts decides when).
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { onStateFile, restrictToOwner } from "./state-database.ts";

const journalFix =
  "it must be a regular file (or absent) that this user can read and write, on a disk with room: move away what is there (the acknowledgements it held are then sent again, which the application takes)";

/** The acknowledgements not yet in the database: see {@link openStateJournal}. */
export interface StateJournal {
  /** How many users it holds a change for. */
  readonly size: number;
  has(uuid: string): boolean;
  /** A user's record as JSON, or undefined for a user forgotten (or none: see {@link has}). */
  get(uuid: string): string | undefined;
  /** Appends a user's record (undefined: forgotten); on disk before it returns. */
  note(uuid: string, record: string | undefined): void;
  /** Every change it holds, in the order of the uuids: the order of the database's index. */
  sorted(): [string, string | undefined][];
  /** Empties it once its changes are in the database. */
  clear(): void;
  close(): void;
}

/**
 * Opens the journal at `path` for appending, with the lines a previous run left read back (its
 * changes are not yet in the database); without a path, a journal in memory only.
 *
 * Its lines are `[uuid, record]` and `[uuid]`, in the order they happened, the record's JSON
 * written as it is rather than as a string within a string: escaping each of its quotes again
 * cost more than the rest of the line.
 */
export function openStateJournal(path: string | undefined): StateJournal {
  const journaled = new Map<string, string | undefined>();
  let file: number | undefined;
  const own = <T>(work: () => T): T =>
    onStateFile("journal of acknowledgements", path as string, journalFix, work);
  if (path !== undefined) {
    own(() => {
      try {
        replayJournal(readFileSync(path, "utf8"), journaled);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      file = openSync(path, "a", 0o600);
      restrictToOwner(path);
    });
  }
  return {
    get size() {
      return journaled.size;
    },
    has: (uuid) => journaled.has(uuid),
    get: (uuid) => journaled.get(uuid),
    note(uuid, record) {
      if (file !== undefined) {
        const key = JSON.stringify(uuid);
        const line = record === undefined ? `[${key}]\n` : `[${key},${record}]\n`;
        const into = file;
        own(() => writeSync(into, line));
      }
      journaled.set(uuid, record);
    },
    sorted: () => [...journaled].sort(([a], [b]) => (a < b ? -1 : 1)),
    clear() {
      journaled.clear();
      // Folded lines applied again after a crash here change nothing: each sets a user's value.
      const into = file;
      if (into !== undefined) own(() => ftruncateSync(into, 0));
    },
    close() {
      if (file !== undefined) closeSync(file);
    },
  };
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
