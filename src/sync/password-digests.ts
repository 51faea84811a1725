// The acknowledged state's password digests: a password is kept only as an HMAC under a key of
// the state's own, in another file, enough to tell that it changed.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { type AcknowledgedRecord, onStateFile, restrictToOwner } from "./state-database.ts";

const keyFix =
  "it must be a file (or absent) that this user can read and write, holding the key this sync wrote: move away what is there (a new key is made, and every password is sent once more)";

/** How records' passwords are kept: see {@link createPasswordDigests}. */
export interface PasswordDigests {
  /**
   * The record with its password replaced by the digest the state keeps; compared with `before`,
   * a record whose digest an earlier version made, by that digest.
   */
  protect(record: AcknowledgedRecord, before?: AcknowledgedRecord): AcknowledgedRecord;
  /** Whether a record's password digest is of an earlier version's kind, to be rewritten. */
  outdated(record: AcknowledgedRecord): boolean;
}

// An earlier version's digest: unsalted SHA-256, rewritten once the password is found unchanged.
const legacyPrefix = "sha256:";

/**
 * The digests of the state file at `path`: HMAC-SHA256 under the key in `PATH-key`, made on first
 * use (a sync without passwords has no key file).
 */
export function createPasswordDigests(path: string): PasswordDigests {
  let key: Buffer | undefined;
  return {
    protect(record, before) {
      if (typeof record.password !== "string") return record;
      const legacy =
        typeof before?.password === "string" && before.password.startsWith(legacyPrefix);
      if (legacy) {
        const digest = createHash("sha256").update(record.password).digest("hex");
        return { ...record, password: `${legacyPrefix}${digest}` };
      }
      key ??= passwordKey(path);
      const digest = createHmac("sha256", key).update(record.password).digest("hex");
      return { ...record, password: `hmac-sha256:${digest}` };
    },
    outdated: (record) =>
      typeof record.password === "string" && record.password.startsWith(legacyPrefix),
  };
}

/**
 * The key of the state's password digests, kept in `PATH-key` (created readable by its owner
 * only), apart from the digests: a copy of the state file alone gives nothing to test guesses
 * against. A state in memory has a key for its life.
 */
function passwordKey(path: string): Buffer {
  if (path === ":memory:") return randomBytes(32);
  const file = `${path}-key`;
  return onStateFile("password-digest key file", file, keyFix, () => readOrMakeKey(file));
}

function readOrMakeKey(file: string): Buffer {
  try {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (key.length === 32) return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // A lost key only makes every password look changed once: each is sent again.
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600 });
  restrictToOwner(file);
  return key;
}
