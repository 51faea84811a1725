import {
  type UserFieldName,
  type UserRecord,
  userFieldNames,
} from "../provisioning/user-record.ts";
import type { DirectorySource } from "./source.ts";

/** One field where the application's user differs from the directory's. */
export interface UserDifference {
  uuid: string;
  /** The field's camelCase name, or "user" when the application does not have the user at all. */
  field: UserFieldName | "user";
  directory?: string;
  application?: string;
}

/** What {@link verifyUsers} found. */
export interface VerifyReport {
  /** How many directory users were read back. */
  checked: number;
  /** How many differences there were; the first 1,000 are listed. */
  differenceCount: number;
  differences: UserDifference[];
}

// An application may hash a password (see examples/password-hashing) and store its own format:
// a difference there is not a fault of the sync.
const compared = userFieldNames.filter((name) => name !== "password" && name !== "passwordFormat");
const maxListed = 1000;

/**
 * Reads every directory user back from the application, through `readUser`, and compares the
 * documented fields except password and password_format, which an application may transform.
 * It sees the users the directory has, not extra users the application may hold.
 */
export async function verifyUsers(
  source: DirectorySource,
  readUser: (uuid: string) => Promise<UserRecord | undefined>,
  { signal }: { signal?: AbortSignal } = {},
): Promise<VerifyReport> {
  const report: VerifyReport = { checked: 0, differenceCount: 0, differences: [] };
  const add = (difference: UserDifference) => {
    report.differenceCount++;
    if (report.differences.length < maxListed) report.differences.push(difference);
  };
  for await (const page of source.read({ uuidsOnly: false, signal })) {
    for (const user of page.users) {
      signal?.throwIfAborted();
      report.checked++;
      const stored = await readUser(user.uuid);
      if (stored === undefined) {
        add({ uuid: user.uuid, field: "user", application: "missing" });
        continue;
      }
      for (const field of compared) {
        if (user[field] === stored[field]) continue;
        add({
          uuid: user.uuid,
          field,
          ...(user[field] !== undefined && { directory: user[field] }),
          ...(stored[field] !== undefined && { application: stored[field] }),
        });
      }
    }
  }
  return report;
}
