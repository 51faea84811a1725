import type { UserRecord } from "../users/user-record.ts";

/** An entry the directory holds that no message can carry (it has no uuid). */
export interface SkippedEntry {
  dn: string;
  reason: string;
}

/** One page of a directory read. */
export interface DirectoryPage {
  users: UserRecord[];
  skipped: SkippedEntry[];
  /** Disabled accounts read (Active Directory), whether or not they are among `users`. */
  disabled?: number;
  /** Entries read that are not user accounts (Active Directory's system accounts), left out. */
  nonUsers?: number;
}

/**
 * Where users come from: an LDAP server, or any other directory. `read` streams every user,
 * page by page, in an order that is the same from one read to the next; with `uuidsOnly` the
 * records may carry their uuid alone (the read that finds deletions asks for nothing else).
 */
export interface DirectorySource {
  /** Names the directory in the state file, so that one state file is not reused for another. */
  readonly identity: string;
  read(options: {
    uuidsOnly: boolean;
    signal?: AbortSignal | undefined;
  }): AsyncIterable<DirectoryPage>;
  /** What changed since a cookie, where the directory can tell (LDAP Content Sync, RFC 4533). */
  readonly changes?: ChangeFeed;
  close?(): Promise<void>;
}

/**
 * A directory that tells what changed since a cookie, so that an update cycle need not read every
 * user. Either call may answer `{ note }` instead: this cycle reads the whole directory, and the
 * note (given once for a lasting reason) says why in the cycle's report.
 */
export interface ChangeFeed {
  /**
   * What a cookie covers besides the directory (the attributes read, the mapping): a cookie kept
   * under another scope is not used.
   */
  readonly scope: string;
  /** Called before a full read: the cookie of the directory as of now. */
  cookieNow(options: {
    signal?: AbortSignal | undefined;
  }): Promise<{ cookie: string } | { note?: string }>;
  /** What changed since `cookie`, which an earlier call returned. */
  changesSince(
    cookie: string,
    options: { signal?: AbortSignal | undefined },
  ): Promise<DirectoryChanges | { note: string }>;
}

/** The changes since a cookie, as {@link ChangeFeed.changesSince} returns them. */
export interface DirectoryChanges {
  /** How the directory told them (the report's `read`): Content Sync unless said otherwise. */
  read?: "content-sync" | "dirsync";
  /** Users added, modified or renamed since the cookie, in the directory's order. */
  changed: UserRecord[];
  skipped: SkippedEntry[];
  /** As in {@link DirectoryPage}: among the changed entries. */
  disabled?: number;
  nonUsers?: number;
  /** Users deleted, or gone out of the filter. */
  deleted: string[];
  /**
   * Set when the directory listed every user still there rather than the deleted (a present
   * phase): any acknowledged user neither here nor in `changed` is gone.
   */
  present?: string[];
  /** The cookie to resume from, once every change is acknowledged. */
  cookie: string;
}

/**
 * A failure to read the directory. `fatal` when retrying cannot fix it (refused credentials, a
 * base DN that does not exist, a bad filter, an untrusted certificate): the interval loop stops
 * and reports it once instead of retrying it for ever.
 */
export class DirectoryError extends Error {
  override readonly name = "DirectoryError";
  readonly fatal: boolean;
  constructor(message: string, { fatal, cause }: { fatal: boolean; cause?: unknown }) {
    super(message, { cause });
    this.fatal = fatal;
  }
}
