import type { UserRecord } from "../provisioning/user-record.ts";

/** An entry the directory holds that no message can carry (it has no uuid). */
export interface SkippedEntry {
  dn: string;
  reason: string;
}

/** One page of a directory read. */
export interface DirectoryPage {
  users: UserRecord[];
  skipped: SkippedEntry[];
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
  close?(): Promise<void>;
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
