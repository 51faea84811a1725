import { redactUrl } from "../internal/url.ts";
import { maxAnswerBytes } from "../platform/outbound.ts";
import type { ProvisioningAnswer } from "../platform/provisioning-api-client.ts";
import { unreachable } from "./conformance-diagnosis.ts";
import type { ConformanceReport, ConformanceResult, LeftBehind } from "./conformance-report.ts";
import { describeAnswer, oneLine } from "./conformance-session.ts";
import { type CheckRun, recordSteps, runSuite } from "./conformance-suite.ts";
import { scimChecks } from "./scim-checks.ts";
import { connectScim, type ScimAnswer, type ScimClient, type ScimTarget } from "./scim-client.ts";
import { describeWant, type ScimCheck, type ScimSession, statusMatches } from "./scim-session.ts";

/** How {@link runConformance} checks a SCIM service instead of a Provisioning API. */
export interface ScimConformanceOptions {
  /**
   * The bearer token the identity provider would hold: sent as `Authorization: Bearer <token>`
   * on every call but the one that checks a wrong token is refused (skipped, with a warning,
   * when absent).
   */
  token?: string | undefined;
}

/** The options {@link runScimConformance} shares with runConformance. */
export interface ScimRunOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  onResult?:
    | ((result: ConformanceResult, position: { index: number; total: number }) => void)
    | undefined;
}

/** How long each clean-up call may wait once the run was interrupted (`signal` aborted). */
const interruptedTimeoutMs = 5_000;

/**
 * Runs Entra ID's and Okta's published sequences against a SCIM service: the body of
 * `runConformance(target, { scim: { token } })`. Each check creates its own users (userNames
 * and emails `conformance-…@example.invalid`) and deletes them after it, passed or failed, by
 * `DELETE /Users/{id}`; `leftBehind` lists the ids it could not delete.
 */
export async function runScimConformance(
  target: ScimTarget,
  scim: ScimConformanceOptions,
  options: ScimRunOptions = {},
): Promise<ConformanceReport> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const send = connectScim(target, { token: scim.token, timeoutMs });
  const sendWhenInterrupted = connectScim(target, {
    token: scim.token,
    timeoutMs: Math.min(timeoutMs, interruptedTimeoutMs),
  });
  const leftBehind: LeftBehind[] = [];
  const runner = {
    send,
    sendWhenInterrupted,
    leftBehind,
    hasToken: scim.token !== undefined,
    timeoutMs,
    signal: options.signal,
  };
  const { passed, results, stoppedEarly } = await runSuite(
    scimChecks,
    (check) => runCheck(check, runner),
    {
      whyFirstFailed: (answer) => whyConnectionFailed(answer, target),
      signal: options.signal,
      onResult: options.onResult,
    },
  );
  return {
    passed,
    results,
    // Every check reads back what it changed: SCIM has GET.
    effectsVerified: true,
    ...(stoppedEarly !== undefined && { stoppedEarly }),
    leftBehind,
    deactivated: [],
  };
}

interface Runner {
  send: ScimClient;
  sendWhenInterrupted: ScimClient;
  leftBehind: LeftBehind[];
  hasToken: boolean;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

async function runCheck(
  check: ScimCheck,
  { send, sendWhenInterrupted, leftBehind, hasToken, timeoutMs, signal }: Runner,
): Promise<CheckRun> {
  const record = recordSteps();
  const { step } = record;
  const answers: ScimAnswer[] = [];
  const created = new Set<string>();
  const session: ScimSession = {
    hasToken,
    step,
    warn: record.warn,
    mark: () => crypto.randomUUID().slice(-12),
    track: (id) => void created.add(id),
    async call(label, call, want) {
      const answer = await send(call, signal);
      answers.push(answer);
      if (want !== "any") {
        const passed = statusMatches(answer, want);
        // The body is for the step that failed: a passing one says its status only.
        const got = passed ? String(answer.status) : describeAnswer(answer);
        step(`${label}: ${describeWant(want)}`, `${label}: ${got}`, passed);
      }
      return answer;
    },
  };
  const { passed, warning } = await record.run(async () => {
    if (check.name.includes("wrong token") && !hasToken) {
      record.warn(
        "a wrong token: 401",
        "not tried: no token was given",
        "Give the token (--token) so that a wrong one can be tried: a SCIM service must not answer without one.",
      );
    }
    await check.run(session);
  });
  // Not under the caller's signal: after Ctrl-C too, the users of this check are deleted.
  const cleanup = await deleteAll(
    created,
    signal?.aborted ? sendWhenInterrupted : send,
    leftBehind,
  );
  const result: ConformanceResult = {
    name: check.name,
    rule: check.rule,
    passed,
    ...(warning !== undefined && { warning }),
    effects: "verified",
    expected: record.expected,
    actual: record.actual,
  };
  const timedOut = answers.some((answer) => answer.timedOut) || cleanup.timedOut !== undefined;
  const hung = timedOut
    ? `No answer within ${timeoutMs} ms (check "${check.name}"): the service hangs or is too slow. Check its logs, or raise the time-out (--timeout).`
    : undefined;
  return { result, answers, ...(hung !== undefined && { hung }) };
}

/**
 * Deletes each user a check created; a 404 counts as gone. Gives up at the first call that gets
 * no answer in time: the rest are left behind, named, untried.
 */
async function deleteAll(ids: Iterable<string>, send: ScimClient, leftBehind: LeftBehind[]) {
  let timedOut: string | undefined;
  for (const id of ids) {
    if (timedOut !== undefined) {
      leftBehind.push({
        uuid: id,
        reason: `not deleted: the clean-up gave up (${oneLine(timedOut)})`,
      });
      continue;
    }
    const answer = await send({ method: "DELETE", path: `/Users/${encodeURIComponent(id)}` });
    if (answer.timedOut) timedOut = answer.error;
    const status = answer.status ?? 0;
    if (!(status >= 200 && status < 300) && status !== 404) {
      leftBehind.push({ uuid: id, reason: `delete: ${describeAnswer(answer)}` });
    }
  }
  return timedOut === undefined ? {} : { timedOut };
}

/** One line that says what to check, from the answer to the connection test that failed. */
function whyConnectionFailed(
  answer: ProvisioningAnswer | undefined,
  target: ScimTarget,
): string | undefined {
  const where =
    typeof target === "object" && !(target instanceof URL)
      ? "the handler"
      : redactUrl(String(target));
  if (answer === undefined) return `The connection test to ${where} was not sent.`;
  if (answer.status === undefined) {
    return (
      unreachable([answer], true) ??
      `No answer from ${where} (${oneLine(answer.error)}): check the host, the port and any firewall.`
    );
  }
  const { status, body } = answer;
  if ("cutOff" in answer && answer.cutOff === true) {
    // No check can judge an answer it could not read whole: the others would only repeat it.
    return `GET /Users answered ${status} with more than ${maxAnswerBytes / 1024} KiB (read up to there and cut off): a SCIM service answers a filter that matches no user with a short ListResponse. Check the base URL (${where}), and that the service ends its answers.`;
  }
  if (status === 401 || status === 403) {
    return `GET /Users answered ${status}: the token was refused. Check --token: the bearer token the identity provider would hold.`;
  }
  if (status === 404 || (typeof body === "string" && /^\s*</.test(body))) {
    return `GET /Users answered ${status}: these are not a SCIM service's answers. Check the base URL: the part before /Users (${where}), such as https://host/scim/v2.`;
  }
  // A 200 with a wrong body, or a 5xx: the other checks still say something.
  return status >= 200 && status < 300
    ? undefined
    : `GET /Users answered ${status}: the connection test failed; Entra ID stops at it.`;
}
