import { wireFieldNames } from "../provisioning/wire.ts";
import { type UserFieldName, type UserRecord, userFieldNames } from "../users/user-record.ts";
import { isGone, type UserReader } from "./read-user.ts";

/**
 * One way a user read back from the application differs from what was expected. Either a field
 * (`field` names it, in camelCase, with both values), or the user as a whole (`field: "user"`,
 * with the `problem`).
 */
export type UserDifference =
  | {
      uuid: string;
      /** The documented field that differs; `uuid` when the application answered with another user. */
      field: "uuid" | UserFieldName;
      /** The value the directory has; absent when it has none. */
      expected?: string;
      /** The value the application stored; absent when it stored none. */
      found?: string;
    }
  | {
      uuid: string;
      field: "user";
      /**
       * `missing`: the directory has the user, the application does not; `still stored`: the user
       * was deleted from the directory, the application still has it; `unreadable`: reading it
       * back failed, `reason` says how.
       */
      problem: "missing" | "still stored" | "unreadable";
      reason?: string;
    };

/**
 * What reading users back found: the platform simulator's `verify()` (`platform-integration/testing`)
 * and the directory sync's `verify()` (`platform-integration/ldap`) both answer with it.
 */
export interface VerifyReport {
  /** How many users were read back: those expected present and those expected gone. */
  checked: number;
  /** False when the signal aborted before every user was read back: only `checked` were. */
  complete: boolean;
  /** How many differences there were in all; the first 1,000 are listed. */
  differenceCount: number;
  /** In the order of the expected users (present, then gone), fields in their documented order. */
  differences: UserDifference[];
}

/** How many differences a {@link VerifyReport} lists; the rest are counted. */
export const maxListedDifferences = 1000;

/** Reads in flight at once: quick for a large directory, gentle on the application. */
const concurrency = 8;

// Never compared: an application may hash the password (see examples/password-hashing), and then
// names its own format. Undocumented fields are not compared either.
const comparedFields = (["uuid", ...userFieldNames] as const).filter(
  (name) => name !== "password" && name !== "passwordFormat",
);

/**
 * How a user read back (`found`, undefined when the application has none; one it keeps
 * deactivated counts as none) differs from the
 * `expected` one (undefined when it should be gone): every documented field except the password
 * and its format, which an application may transform. Empty when they agree.
 */
export function compareUser(
  uuid: string,
  expected: UserRecord | undefined,
  found: UserRecord | undefined,
): UserDifference[] {
  // A user the application keeps deactivated is deleted, as the platform sees it.
  if (expected === undefined) {
    return isGone(found) ? [] : [{ uuid, field: "user", problem: "still stored" }];
  }
  if (isGone(found)) return [{ uuid, field: "user", problem: "missing" }];
  return comparedFields.flatMap((field) =>
    expected[field] === found[field]
      ? []
      : [
          {
            uuid,
            field,
            ...(expected[field] !== undefined && { expected: expected[field] }),
            ...(found[field] !== undefined && { found: found[field] }),
          },
        ],
  );
}

/** A difference in one line, with the field's wire name: `email: expected "a@b", found absent`. */
export function describeUserDifference(difference: UserDifference): string {
  if (difference.field === "user") {
    if (difference.problem === "missing") return "not found";
    return difference.problem === "unreadable"
      ? (difference.reason ?? "unreadable")
      : "still stored";
  }
  const name = difference.field === "uuid" ? "uuid" : wireFieldNames[difference.field];
  return `${name}: expected ${show(difference.expected)}, found ${show(difference.found)}`;
}

function show(value: string | undefined): string {
  return value === undefined ? "absent" : JSON.stringify(value);
}

/**
 * Reads back, eight at a time, every user of `present` (an iterable or a stream, such as
 * a directory's pages flattened) and every uuid of `gone`, through `read`, and compares each with
 * {@link compareUser}. A read that fails is an `unreadable` difference, not a rejection: one
 * broken user does not hide the others. When `signal` aborts it stops reading (what it checked
 * is reported, `complete: false`) and ends the stream of `present`: the stream need not watch it. It sees the users expected, not extra users the application holds.
 */
export async function verifyUsers(
  read: UserReader,
  {
    present,
    gone = [],
    signal,
  }: {
    present: Iterable<UserRecord> | AsyncIterable<UserRecord>;
    gone?: Iterable<string>;
    signal?: AbortSignal | undefined;
  },
): Promise<VerifyReport> {
  const report: VerifyReport = { checked: 0, complete: true, differenceCount: 0, differences: [] };
  const expected = numbered(present, gone);
  // Reads finish out of order: each one's differences wait here until those before are listed.
  const finished = new Map<number, UserDifference[]>();
  let nextToList = 0;
  const listInOrder = () => {
    for (let found = finished.get(nextToList); found; found = finished.get(nextToList)) {
      finished.delete(nextToList++);
      report.differenceCount += found.length;
      const room = maxListedDifferences - report.differences.length;
      report.differences.push(...found.slice(0, Math.max(0, room)));
    }
  };
  const worker = async () => {
    while (!signal?.aborted) {
      const next = await expected.next();
      if (next.done) return;
      const [index, uuid, user] = next.value;
      finished.set(
        index,
        await read(uuid).then(
          (found) => compareUser(uuid, user, found),
          (error: unknown) => [
            { uuid, field: "user", problem: "unreadable", reason: messageOf(error) },
          ],
        ),
      );
      report.checked++;
      listInOrder();
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    // Stopped early: let the stream release what it holds (a directory's connection).
    await expected.return(undefined);
  }
  report.complete = !signal?.aborted;
  return report;
}

async function* numbered(
  present: Iterable<UserRecord> | AsyncIterable<UserRecord>,
  gone: Iterable<string>,
): AsyncGenerator<[number, string, UserRecord | undefined]> {
  let index = 0;
  for await (const user of present) yield [index++, user.uuid, user];
  for (const uuid of gone) yield [index++, uuid, undefined];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
