// The directory sync's public shapes: its options, its report and progress, and the sync itself.
// directory-sync.ts holds the behaviour.

import type { SyncStop } from "../platform/messages.ts";
import type {
  ProvisioningApiClient,
  ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
import type { VerifyReport } from "../platform/verify-users.ts";
import type { UserRecord } from "../users/user-record.ts";
import type { SkippedEntry } from "./source.ts";

/** Which kind of cycle ran: the first, an update against the acknowledged state, or a full re-sync. */
export type SyncMode = "initial" | "update" | "full";

/**
 * How a cycle read the directory: `content-sync`, only what changed since the last completed
 * cycle (LDAP Content Sync, RFC 4533, refreshOnly); `dirsync`, the same on Active Directory
 * (its DirSync control); `full`, every user, diffed against the acknowledged state (the initial
 * sync, a full re-sync, and wherever neither can serve).
 */
export type DirectoryRead = "content-sync" | "dirsync" | "full";

/** How far a cycle is, reported after each page read and each acknowledged message. */
export interface DirectorySyncProgress {
  mode: SyncMode;
  /** Entries read from the directory so far in this cycle's main read. */
  read: number;
  /** The directory's size when a first read counted it (update and full cycles). */
  total?: number;
  created: number;
  modified: number;
  deleted: number;
  unchanged: number;
}

/** What one cycle did. */
export interface DirectorySyncReport {
  /** True when every change was acknowledged: the application and the directory agree. */
  completed: boolean;
  mode: SyncMode;
  read: DirectoryRead;
  /**
   * Why this cycle read the whole directory where Content Sync was asked for: the server does
   * not offer it or refused the cookie, too many entries changed... A lasting reason is given
   * once, in the first cycle it applies to.
   */
  readNote?: string;
  created: number;
  modified: number;
  deleted: number;
  /**
   * Users that needed no message. After a Content Sync cycle that completed, every user the
   * application holds that this cycle did not change.
   */
  unchanged: number;
  /** Entries that no message can carry (the first 100 are in `skippedEntries`). */
  skipped: number;
  skippedEntries: SkippedEntry[];
  /**
   * Active Directory: the disabled accounts this cycle read (what they became is the
   * `disabledAccounts` option's), and the entries it read and left out as not user accounts
   * (the domain's system accounts: Administrator, Guest, krbtgt, DNS service accounts).
   */
  disabled?: number;
  nonUsers?: number;
  /**
   * Messages the application refused (a 4xx, such as 409 for a username another user holds):
   * each user's message is held, unacknowledged, and sent again next cycle, while the cycle went
   * on with the other users. The first 100 are in `refusals`.
   */
  refused: number;
  /** The refused messages: uuid, status and the application's error body (first 100). */
  refusals: SyncStop[];
  /**
   * The refusals, plus 1 when the cycle stopped at a message, on a directory error or at the
   * delete guard.
   */
  failed: number;
  /** The message the cycle stopped at; the next cycle starts again with it. */
  stoppedAt?: SyncStop;
  /** Why the directory could not be read; nothing after the failure was sent. */
  directoryError?: string;
  /** Set when the cycle would have deleted more users than the delete guard lets: nothing was sent. */
  deleteGuard?: DeleteGuardStop;
  /**
   * Set when the guard would have stopped this cycle and the allowance (`allowDeletes`,
   * `allowDeleteAll`) let it through: the deletes it allowed (`deleted` says how many went). The
   * allowance is then spent; what a failure left of it covers the same users in later cycles.
   */
  allowed?: number;
  durationMs: number;
}

/** A cycle the delete guard stopped: see {@link SyncTargetOptions.deleteGuard}. */
export interface DeleteGuardStop {
  /** The deletes the cycle would have sent. */
  deletes: number;
  /** The users the application holds. */
  held: number;
  /** The deletes of the guard's window before this cycle, when there were any. */
  windowDeletes?: number;
  /** Why, and how to allow them. */
  message: string;
}

/**
 * The mass-delete guard, as Entra's accidental-deletion threshold: a cycle that would delete more
 * than `maxDeletes` users, or more than `maxPercent` % of the users the application holds (and
 * at least 20), or every one of them, sends nothing and reports why. The deletes of a rolling
 * window before the cycle count too, against the same thresholds: a directory that shrinks a
 * little each cycle is stopped where one that shrinks at once is.
 */
export interface DeleteGuard {
  /** Default 500. */
  maxDeletes?: number;
  /** Default 20. */
  maxPercent?: number;
  /**
   * The rolling window, in milliseconds (default 24 hours; 0 judges each cycle alone). Its deletes
   * are kept in the state file, so a restart does not reset it.
   */
  windowMs?: number;
}

/** The options every directory sync takes, whatever its source. */
export interface SyncTargetOptions {
  /** The Provisioning API's base URL (it may carry a path), or a handler called in-process. */
  target: ProvisioningTarget;
  /**
   * The SQLite file that holds the acknowledged state, what the application holds and the Content
   * Sync cookie (created when missing; `:memory:` for tests).
   */
  state: string;
  /**
   * The application serves `POST /v1/reset` (the release's `identity.enable_reset_request`): a
   * full re-sync sends it first. Off by default, as the spec's four endpoints do not include it.
   */
  resetRequest?: boolean;
  /** How long one call may take before it counts as a failure (default 30 s). */
  timeoutMs?: number;
  /**
   * For an `https://` target: PEM certificate(s) to trust beside the runtime's roots (a private
   * CA, or the application's self-signed certificate). The certificate is always checked.
   */
  targetTls?: { ca?: string | string[] | undefined };
  /**
   * Stops a cycle that would delete many users before it sends anything (default: more than 500,
   * or more than 20 % of the users the application holds and at least 20, or all of them): a
   * wrong base DN or filter, or a directory restored from an old backup, must not wipe the
   * application. `false` turns it off.
   */
  deleteGuard?: DeleteGuard | false;
  /**
   * Lets the next cycle the delete guard would stop delete up to this many users (not every user
   * the application holds: see {@link allowDeleteAll}): the operator's answer to a cycle the guard
   * stopped (`sync --allow-deletes N`). That cycle spends it, whether it covered the cycle or not;
   * each sync created with it (each start of the CLI) has it once. The one standing permission is
   * `deleteGuard: false`.
   */
  allowDeletes?: number;
  /**
   * Lets the next cycle the delete guard would stop delete up to every user the application
   * holds (`sync --allow-delete-all`), which no count allows; spent as {@link allowDeletes} is.
   */
  allowDeleteAll?: boolean;
  /** The clock of the delete guard's window (default `Date.now`): for tests. */
  now?(): number;
  onProgress?(progress: DirectorySyncProgress): void;
  /**
   * Wraps the client that every message is sent through, once, when the sync is created: for a
   * test, one that loses an answer or delivers a message twice (the testing kit has one, see
   * docs/directory-sync.md), or a log of each call. The wrapper answers every call as a client
   * does: it resolves, never rejects.
   */
  wrapClient?(client: ProvisioningApiClient): ProvisioningApiClient;
}

/** A directory kept in sync with a Provisioning API: see `createDirectorySync`. */
export interface DirectorySync {
  /**
   * Runs one cycle: ping, deletions, then creates and modifies in the directory's order, one at a
   * time, until one fails. Rejects only for a failure retrying cannot fix: a fatal
   * {@link DirectoryError} (the directory) or a {@link TargetError} (the application's certificate
   * is not trusted); any other failure is in the report.
   */
  syncOnce(options?: { signal?: AbortSignal }): Promise<DirectorySyncReport>;
  /** Runs a cycle every `intervalMs` until `signal` aborts; rejects as syncOnce does. */
  run(options: {
    intervalMs: number;
    signal?: AbortSignal;
    onCycle?(report: DirectorySyncReport): void;
  }): Promise<void>;
  /**
   * Makes the next cycle a full re-sync, for when the filter or the mapping changed: `POST
   * /v1/reset` when the application opted in, then a create for every user, deletes for users
   * gone. The request is kept in the state file until that cycle starts.
   */
  requestResync(): void;
  /**
   * Reads every directory user back from the application through `readUser` (the conformance
   * checker's read route), a few at a time, and lists each field that differs, the password and
   * its format aside; see {@link VerifyReport}. It sees the users the directory has, not extra
   * users the application holds.
   */
  verify(
    readUser: (uuid: string) => Promise<UserRecord | undefined>,
    options?: { signal?: AbortSignal },
  ): Promise<VerifyReport>;
  /** Closes the state file and the directory connection; closing again does nothing. */
  close(): Promise<void>;
}
