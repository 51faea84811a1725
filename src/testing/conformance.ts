import {
  connectProvisioning,
  type ProvisioningAnswer,
  type ProvisioningApiClient,
  type ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
import {
  connectUserReader,
  isGone,
  isReadTimeout,
  type ReadUser,
  type UserReader,
} from "../platform/read-user.ts";
import { compareUser, describeUserDifference } from "../platform/verify-users.ts";
import { checks } from "./conformance-checks.ts";
import { swapCheck } from "./conformance-conflicts.ts";
import { whyPingFailed } from "./conformance-diagnosis.ts";
import type { ConformanceReport, ConformanceResult, LeftBehind } from "./conformance-report.ts";
import {
  type Check,
  describeAnswer,
  oneLine,
  remove,
  type Session,
  type Want,
} from "./conformance-session.ts";
import { type CheckRun, recordSteps, runSuite } from "./conformance-suite.ts";
import { runScimConformance, type ScimConformanceOptions } from "./scim-conformance.ts";

export type { ConformanceReport, ConformanceResult, LeftBehind };

/** How {@link runConformance} calls the application, and how it may look inside it. */
export interface ConformanceOptions {
  /** How long one call may take (default 10 s). */
  timeoutMs?: number | undefined;
  /**
   * Reads a user back from the application (see {@link ReadUser}: a URL template with `{uuid}`, or
   * a function). The API has no read endpoint, so without it the checks whose names claim an
   * effect ("updates", "keeps the other fields", "is deleted") judge statuses only and say so
   * (`effects: "status only"`); with it, each reads the user back and fails on a wrong stored
   * value, naming the field. The password, its format and undocumented fields are not compared.
   */
  readUser?: ReadUser;
  signal?: AbortSignal;
  /**
   * Called as each check ends, with its result and its place in the run (1-based) out of the
   * suite's checks: for progress, since a run against a slow application takes a while.
   */
  onResult?: (result: ConformanceResult, position: { index: number; total: number }) => void;
  /**
   * Adds a check that swaps two users' emails (the first modify brings a value the other still
   * holds) and expects both modifies to succeed and, with `readUser`, both emails to end swapped:
   * an application with a unique email passes it with the handler's `quarantine` option. Off by
   * default: not every application holds emails unique. Default `false`.
   */
  conflicts?: boolean | undefined;
  /**
   * Checks a SCIM 2.0 service instead (`target` is its base URL, the part before `/Users`, or a
   * handler such as `createScimHandler`'s): Entra ID's and Okta's published sequences (create,
   * get, filter by userName and externalId, PATCH replace/add/remove with and without path,
   * string booleans, deactivate, reactivate, a PATCH that must not reactivate, PUT, duplicate
   * 409, unknown user 404, wrong token 401, pagination), each reading back what it changed.
   * `readUser` and `conflicts` are the Provisioning API's and are refused with it.
   */
  scim?: ScimConformanceOptions | undefined;
}

/** How long each clean-up call may wait once the run was interrupted (`signal` aborted). */
const interruptedTimeoutMs = 5_000;

/**
 * Checks a Provisioning API implementation, in any language, from the outside: every rule of
 * spec sections 4.1 and 7 (statuses, duplicate create, modify of a missing user, delete of a
 * missing user), idempotent redelivery, partial modify, unknown fields, uuids with reserved URL
 * characters, non-ASCII data, refusal of bad input, and a full simulated sync with changes.
 *
 * Checks run one after the other with test users (uuids and usernames prefixed `conformance-`,
 * emails at `example.invalid`) and delete every user they created after each check, passed or
 * failed, also after `signal` aborted; `leftBehind` lists any that could not be deleted. The
 * clean-up gives up at the first call that gets no answer within `timeoutMs` (5 s at most once
 * `signal` aborted) and lists the users it did not try. It stops after the first check when ping
 * fails, and after the first check in which a call got no answer in time or nothing answers (with
 * `stoppedEarly` saying what to check), and after the check under way when `signal` aborts (the
 * report does not pass). It never rejects, except for a
 * malformed `readUser` template or base URL, and for `scim` given with `readUser` or `conflicts`.
 * The CLI runs it as `platform-integration conformance <url>`.
 *
 * With `scim`, it checks a SCIM 2.0 service the same way and in the same report (see
 * {@link ConformanceOptions.scim}; `platform-integration conformance --scim <url> --token …`):
 * `leftBehind` then names SCIM ids, every check verifies its effects by reading back, and the
 * run stops after the first check when the connection test fails (a refused token, a wrong base
 * URL, nothing answering).
 *
 * @example
 * ```ts
 * const report = await runConformance("http://127.0.0.1:3000", {
 *   readUser: "http://127.0.0.1:3000/v1/user/{uuid}", // or (uuid) => store.get(uuid)
 * });
 * expect(report.results.filter((result) => !result.passed)).toEqual([]);
 *
 * const scim = await runConformance("http://127.0.0.1:3000/scim/v2", { scim: { token } });
 * expect(scim.passed).toBe(true);
 * ```
 */
export async function runConformance(
  target: ProvisioningTarget,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  if (options.scim !== undefined) {
    if (options.readUser !== undefined || options.conflicts !== undefined) {
      throw new TypeError(
        "readUser and conflicts are the Provisioning API's options: a SCIM run reads users back with GET /Users/{id}, and has no conflict check to add",
      );
    }
    return runScimConformance(target, options.scim, options);
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  const send = connectProvisioning(target, { timeoutMs });
  // Once interrupted, the clean-up waits less: whoever pressed Ctrl-C wants the prompt back.
  const sendWhenInterrupted = connectProvisioning(target, {
    timeoutMs: Math.min(timeoutMs, interruptedTimeoutMs),
  });
  const read =
    options.readUser === undefined ? undefined : connectUserReader(options.readUser, { timeoutMs });
  const leftBehind: LeftBehind[] = [];
  const deactivated = new Set<string>();
  const suite = options.conflicts === true ? [...checks, swapCheck] : checks;
  const runner = {
    send,
    sendWhenInterrupted,
    read,
    target,
    timeoutMs,
    leftBehind,
    deactivated,
    options,
  };
  const { passed, results, stoppedEarly } = await runSuite(
    suite,
    (check) => runCheck(check, runner),
    {
      whyFirstFailed: (answer) => whyPingFailed(answer, target),
      signal: options.signal,
      onResult: options.onResult,
    },
  );
  return {
    passed,
    results,
    effectsVerified: read !== undefined,
    ...(stoppedEarly !== undefined && { stoppedEarly }),
    leftBehind,
    deactivated: [...deactivated],
  };
}

interface Runner {
  send: ProvisioningApiClient;
  sendWhenInterrupted: ProvisioningApiClient;
  read: UserReader | undefined;
  target: ProvisioningTarget;
  timeoutMs: number;
  leftBehind: LeftBehind[];
  deactivated: Set<string>;
  options: ConformanceOptions;
}

async function runCheck(
  check: Check,
  { send, sendWhenInterrupted, read, target, timeoutMs, leftBehind, deactivated, options }: Runner,
): Promise<CheckRun> {
  const { signal } = options;
  const record = recordSteps();
  const { step } = record;
  const answers: ProvisioningAnswer[] = [];
  const used = new Set<string>();
  const session: Session = {
    target,
    timeoutMs,
    ...(signal && { signal }),
    step,
    warn: record.warn,
    uuid: (text) => {
      const uuid = `conformance-${crypto.randomUUID()}${text === undefined ? "" : `-${text}`}`;
      used.add(uuid);
      return uuid;
    },
    track: (uuid) => void used.add(uuid),
    async call(label, request, want) {
      const answer = await send(request, signal);
      answers.push(answer);
      if (want !== "any") {
        step(`${label}: ${want}`, `${label}: ${describeAnswer(answer)}`, matches(answer, want));
      }
      return answer;
    },
    async stored(present, gone = []) {
      if (!read) return;
      const label = present.length > 0 ? "read back" : "read back after delete";
      const single = present.length + gone.length === 1;
      const want = single
        ? `${label}: ${present.length > 0 ? "as sent" : "gone"}`
        : `${label}: ${present.length} as sent, ${gone.length} gone`;
      for (const [uuid, user] of [
        ...present.map((user) => [user.uuid, user] as const),
        ...gone.map((uuid) => [uuid, undefined] as const),
      ]) {
        let difference: string | undefined;
        try {
          const [first] = compareUser(uuid, user, await read(uuid));
          difference = first && describeUserDifference(first);
        } catch (error) {
          difference = oneLine(error instanceof Error ? error.message : String(error));
        }
        if (difference) step(want, `${label}: ${single ? "" : `${uuid} `}${difference}`, false);
      }
      step(want, want, true);
    },
  };
  const { passed, warning } = await record.run(() => check.run(session));
  // Not under the caller's signal: after Ctrl-C too, the users of this check are deleted.
  const cleanup = await deleteAll(used, signal?.aborted ? sendWhenInterrupted : send, read);
  leftBehind.push(...cleanup.left);
  for (const uuid of cleanup.deactivated) deactivated.add(uuid);
  const result: ConformanceResult = {
    name: check.name,
    rule: check.rule,
    passed,
    ...(warning !== undefined && { warning }),
    ...(check.effects && { effects: read ? "verified" : "status only" }),
    expected: record.expected,
    actual: record.actual,
  };
  // An application that let one call run out its time is stuck or far too slow: every further
  // check would wait as long for each of its calls, so the run stops here, with one line.
  const timedOut = answers.find((answer) => answer.timedOut) ?? cleanup.timedOut;
  const hung =
    timedOut === undefined
      ? undefined
      : `No answer within ${timeoutMs} ms (check "${check.name}"): the application hangs or is too slow. Check its logs, or raise the time-out (--timeout).`;
  return { result, answers, ...(hung !== undefined && { hung }) };
}

/** What the clean-up after a check left, and the answer it gave up at, if one timed out. */
interface Cleanup {
  left: LeftBehind[];
  /** Users read back deactivated: deleted as the platform sees it, their rows still there. */
  deactivated: string[];
  timedOut?: { error: string };
}

/**
 * Deletes each user that may be stored, and returns those it could not. With a reader, a user
 * read back absent (or deactivated) needs no delete, one still there after its delete is left
 * behind, and one read back deactivated is named as such; without
 * one, a 404 counts as gone, as nothing can tell it from a refusal. It gives up at the first call
 * that gets no answer within the time-out: the rest are left behind, named, untried.
 */
async function deleteAll(
  uuids: Iterable<string>,
  send: ProvisioningApiClient,
  read: UserReader | undefined,
): Promise<Cleanup> {
  const left: LeftBehind[] = [];
  const cleanup: Cleanup = { left, deactivated: [] };
  const stored = async (uuid: string) => {
    if (!read) return false;
    try {
      const user = await read(uuid);
      if (user?.deactivatedAt !== undefined && !cleanup.deactivated.includes(uuid)) {
        cleanup.deactivated.push(uuid);
      }
      return !isGone(user);
    } catch (error) {
      if (isReadTimeout(error)) cleanup.timedOut = { error: (error as Error).message };
      return true;
    }
  };
  for (const uuid of uuids) {
    const gaveUp = cleanup.timedOut;
    if (gaveUp !== undefined) {
      left.push({ uuid, reason: `not deleted: the clean-up gave up (${oneLine(gaveUp.error)})` });
      continue;
    }
    if (read && !(await stored(uuid))) continue;
    if (cleanup.timedOut !== undefined) {
      left.push({ uuid, reason: `read back: ${oneLine(cleanup.timedOut.error)}` });
      continue;
    }
    const answer = await send(remove(uuid));
    if (answer.timedOut) cleanup.timedOut = answer;
    const status = answer.status ?? 0;
    if ((status < 200 || status > 299) && (read || status !== 404)) {
      left.push({ uuid, reason: `delete: ${describeAnswer(answer)}` });
    } else if (await stored(uuid)) {
      left.push({ uuid, reason: `delete: ${status}, but the user is still stored` });
    }
  }
  return cleanup;
}

function matches(answer: ProvisioningAnswer, want: Want): boolean {
  if (answer.status === undefined) return false;
  const success = answer.status >= 200 && answer.status < 300;
  if (want === "2xx") return success;
  if (want === "not 2xx") return !success;
  return answer.status === want;
}
