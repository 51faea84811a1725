// What the application acknowledged, for the directory sync to diff the directory against: the
// state file (state-database.ts), the journal in front of it (state-journal.ts) and the password
// digests (password-digests.ts), composed. This module owns when the journal is folded.
import { createPasswordDigests, type PasswordDigests } from "./password-digests.ts";
import {
  type AcknowledgedRecord,
  onStateFile,
  openStateDatabase,
  StateFileError,
  type StateIdentity,
  StateMismatchError,
  stateFileFix,
} from "./state-database.ts";
import { openStateJournal, type StateJournal } from "./state-journal.ts";

export { type AcknowledgedRecord, StateFileError, type StateIdentity, StateMismatchError };

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
  get(uuid: string): AcknowledgedRecord | null | undefined;
  acknowledge(record: AcknowledgedRecord): void;
  forget(uuid: string): void;
  /** How many users the application holds, as far as the state knows. */
  count(): number;
  /**
   * Marks every user to be created again, in the same transaction that clears the request (unless
   * `keepRequest`: a full re-sync that the delete guard has yet to let through); with `reset`
   * (the application acknowledged POST /v1/reset), forgets first the users the last scan did not
   * see (the reset removed them for good) and records that the state knows what it holds again.
   */
  forgetContents(options?: { reset?: boolean; keepRequest?: boolean }): void;
  /**
   * A reset was sent and not acknowledged (its answer lost, the process killed): the application
   * may hold none of the state's users, or all of them.
   */
  resetInFlight: boolean;
  /**
   * The state file was taken over from another application (`adopt`): its users say nothing of
   * what this application holds, so that a reset is judged as from an empty state, until one
   * is acknowledged.
   */
  readonly heldUnknown: boolean;
  /** A full re-sync asked for and not yet started: it survives a restart. */
  resyncRequested: boolean;
  /**
   * The Content Sync cookie of the last cycle that completed, and the scope it covers; cleared
   * with the contents, as a cookie is only worth the acknowledged records it describes.
   */
  changeCookie: { scope: string; cookie: string } | undefined;
  /** The delete guard's window (delete-guard.ts reads and writes it). */
  deleteWindow: string | undefined;
  /** Starts collecting the uuids a read of the directory sees, for {@link unseen}. */
  beginScan(): void;
  markSeen(uuids: readonly string[]): void;
  /** The acknowledged users the last scan did not see, in pages, safe to forget while iterating. */
  unseen(): Generator<string>;
  /** How many acknowledged users the last scan did not see. */
  unseenCount(): number;
  /** See {@link PasswordDigests.protect}. */
  protect(record: AcknowledgedRecord, before?: AcknowledgedRecord): AcknowledgedRecord;
  /** See {@link PasswordDigests.outdated}. */
  outdated(record: AcknowledgedRecord): boolean;
  /** Another acknowledged user whose username is `username`, if any. */
  holderOf(username: string, except: string): string | undefined;
  /** Records that the application renamed an acknowledged user, its other fields unchanged. */
  rename(uuid: string, username: string): void;
  close(): void;
}

/**
 * Acknowledgements journaled since the last fold, before they are folded into the database. A
 * fold's page writes are shared by its rows, so folding rarely costs less CPU an acknowledgement,
 * for the memory of the records held until then (bench/README.md, directory-sync.bench.ts).
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
  const database = openStateDatabase(path, identity, adopt);
  const digests = createPasswordDigests(path);
  let journal: StateJournal | undefined;
  // An initial sync asks about each user before its create: while the database holds no row, the
  // journal alone answers, without a SQLite lookup a message (bench/README.md).
  let databaseHasRows = database.hasRows();
  const fold = () => {
    if (journal === undefined || journal.size === 0) return;
    // In the index's order: each row lands near the last, in pages already in SQLite's cache.
    database.apply(journal.sorted());
    journal.clear();
    databaseHasRows = database.hasRows();
  };
  try {
    journal = openStateJournal(path === ":memory:" ? undefined : `${path}-acks`);
    // The journal a previous run left, folded in: a failure here is the state file's too.
    onStateFile("state file", path, stateFileFix, fold);
  } catch (error) {
    journal?.close();
    database.close();
    throw error;
  }
  const opened = journal;
  const note = (uuid: string, record: string | undefined) => {
    opened.note(uuid, record);
    if (opened.size >= foldEvery) fold();
  };
  /** A user's record as JSON: the journal's, else the database's. */
  const recordOf = (uuid: string) =>
    opened.has(uuid) ? opened.get(uuid) : databaseHasRows ? database.record(uuid) : undefined;

  const state: AcknowledgedState = {
    get(uuid) {
      const text = recordOf(uuid);
      if (text === undefined) return undefined;
      return text === null ? null : (JSON.parse(text) as AcknowledgedRecord);
    },
    acknowledge(record) {
      note(record.uuid as string, JSON.stringify(digests.protect(record)));
    },
    forget(uuid) {
      note(uuid, undefined);
    },
    count() {
      fold();
      return database.count();
    },
    forgetContents(options) {
      fold();
      database.forgetContents(options);
    },
    get resetInFlight() {
      return database.readMeta("resetInFlight") === "true";
    },
    set resetInFlight(value) {
      database.writeMeta("resetInFlight", value ? "true" : undefined);
    },
    get heldUnknown() {
      return database.readMeta("heldUnknown") === "true";
    },
    get resyncRequested() {
      return database.readMeta("resync") === "true";
    },
    set resyncRequested(value) {
      database.writeMeta("resync", String(value));
    },
    get changeCookie() {
      const stored = database.readMeta("changeCookie");
      return stored === undefined ? undefined : JSON.parse(stored);
    },
    set changeCookie(value) {
      database.writeMeta("changeCookie", value === undefined ? undefined : JSON.stringify(value));
    },
    get deleteWindow() {
      return database.readMeta("deleteWindow");
    },
    set deleteWindow(value) {
      database.writeMeta("deleteWindow", value);
    },
    beginScan() {
      fold();
      database.beginScan();
    },
    markSeen: (uuids) => database.markSeen(uuids),
    unseen: () => database.unseen(),
    unseenCount: () => database.unseenCount(),
    protect: digests.protect,
    outdated: digests.outdated,
    holderOf(username, except) {
      fold();
      return database.holderOf(username, except);
    },
    rename(uuid, username) {
      const text = opened.has(uuid) ? opened.get(uuid) : database.record(uuid);
      if (text === undefined || text === null) return;
      note(uuid, JSON.stringify({ ...(JSON.parse(text) as AcknowledgedRecord), username }));
    },
    close() {
      try {
        fold();
      } finally {
        opened.close();
        database.close();
      }
    },
  };
  return onOwnFile(state, path);
}

/**
 * The state with every failure of its files told as a {@link StateFileError} naming the state file
 * (the journal and the key file name themselves), never as the directory's.
 */
function onOwnFile(state: AcknowledgedState, path: string): AcknowledgedState {
  const guarded = <T>(work: () => T): T => onStateFile("state file", path, stateFileFix, work);
  const wrapped = Object.create(null) as AcknowledgedState;
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(state))) {
    const { get, set, value } = descriptor;
    Object.defineProperty(wrapped, name, {
      enumerable: true,
      ...(get && { get: () => guarded(() => get.call(state)) }),
      ...(set && { set: (next: unknown) => guarded(() => set.call(state, next)) }),
      ...(typeof value === "function" && {
        value:
          name === "unseen"
            ? function* () {
                const pages = guarded(() => state.unseen());
                for (;;) {
                  const next = guarded(() => pages.next());
                  if (next.done) return;
                  yield next.value;
                }
              }
            : (...args: unknown[]) => guarded(() => value.apply(state, args)),
      }),
    });
  }
  return wrapped;
}
