// What the two conformance runners (the Provisioning API's and the SCIM service's) share: the
// record of a check's steps, and the loop over a suite that stops early.
import type { ProvisioningAnswer } from "../platform/provisioning-api-client.ts";
import { unreachable } from "./conformance-diagnosis.ts";
import type { ConformanceResult } from "./conformance-report.ts";
import { oneLine } from "./conformance-session.ts";

class StepFailed extends Error {}
/** Ends a check as a warning; its message is the advice. */
class Warned extends Error {}

/** The steps of one check, and how it ended. */
export interface StepRecord {
  /** Records a step; a failed one ends the check. */
  step(expected: string, actual: string, passed: boolean): void;
  /** Records a step and ends the check as a warning: passed, printed with `advice`. */
  warn(expected: string, actual: string, advice: string): never;
  /** Runs a check's body; never rejects: a throw other than a step's is a failed step of its own. */
  run(body: () => Promise<void>): Promise<{ passed: boolean; warning?: string }>;
  /** The steps so far, for the result. */
  readonly expected: string;
  readonly actual: string;
}

/** A new {@link StepRecord}. */
export function recordSteps(): StepRecord {
  const expected: string[] = [];
  const actual: string[] = [];
  const push = (want: string, got: string) => {
    expected.push(want);
    actual.push(got);
  };
  return {
    step(want, got, passed) {
      push(want, got);
      if (!passed) throw new StepFailed();
    },
    warn(want, got, advice) {
      push(want, got);
      throw new Warned(advice);
    },
    async run(body) {
      try {
        await body();
        return { passed: true };
      } catch (error) {
        if (error instanceof Warned) return { passed: true, warning: error.message };
        if (!(error instanceof StepFailed)) {
          push(
            "no exception",
            `threw ${oneLine(error instanceof Error ? error.message : String(error))}`,
          );
        }
        return { passed: false };
      }
    },
    get expected() {
      return expected.join("; ");
    },
    get actual() {
      return actual.join("; ");
    },
  };
}

/** One check's run: its result, the answers it got, and why the run must stop, if it must. */
export interface CheckRun {
  result: ConformanceResult;
  answers: ProvisioningAnswer[];
  hung?: string;
}

/**
 * Runs a suite's checks one after the other: stops when `signal` aborts, after a failed first
 * check with `whyFirstFailed`'s line (the ping, the connection test), and after a check in which
 * nothing answered or a call timed out. `passed` only when every check ran and passed.
 */
export async function runSuite<Check>(
  suite: readonly Check[],
  runCheck: (check: Check) => Promise<CheckRun>,
  {
    whyFirstFailed,
    signal,
    onResult,
  }: {
    whyFirstFailed: (answer: ProvisioningAnswer | undefined) => string | undefined;
    signal?: AbortSignal | undefined;
    onResult?:
      | ((result: ConformanceResult, position: { index: number; total: number }) => void)
      | undefined;
  },
): Promise<{ passed: boolean; results: ConformanceResult[]; stoppedEarly?: string }> {
  const results: ConformanceResult[] = [];
  let stoppedEarly: string | undefined;
  for (const check of suite) {
    if (signal?.aborted) break;
    const run = await runCheck(check);
    results.push(run.result);
    onResult?.(run.result, { index: results.length, total: suite.length });
    if (signal?.aborted) break;
    stoppedEarly =
      check === suite[0] && !run.result.passed
        ? whyFirstFailed(run.answers.at(-1))
        : (unreachable(run.answers, false) ?? run.hung);
    if (stoppedEarly !== undefined) break;
  }
  const passed =
    results.length === suite.length &&
    stoppedEarly === undefined &&
    results.every((result) => result.passed);
  return { passed, results, ...(stoppedEarly !== undefined && { stoppedEarly }) };
}
