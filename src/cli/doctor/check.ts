// A doctor check's result and the wording helpers every check shares.
import { readFailureCause } from "../../internal/failure-cause.ts";
/**
 * `pass` checked and fine; `warn` works but deserves attention; `fail` does not work (the exit
 * status is then 1); `skip` not checked, with the reason in the summary.
 */
export type CheckStatus = "pass" | "warn" | "fail" | "skip";

/** The outcome of one doctor check, as the table and `--json` show it. */
export interface CheckResult {
  /** A stable identifier for tools: `base-url`, `dns`, `tcp`, `tls`, `version`, `clock`, ... */
  id: string;
  /** What was checked, for a person. */
  title: string;
  status: CheckStatus;
  /** What was found, in one line: only what was checked, never more. */
  summary: string;
  /** For `fail` and `warn`: what to do, in one line. */
  fix?: string;
  /** Facts for tools (the certificate's fields, the measured skew, ...). */
  details?: Record<string, unknown>;
}

/** Builds a result; `fix` and `details` are left out when undefined, so JSON stays small. */
export function result(
  id: string,
  title: string,
  status: CheckStatus,
  summary: string,
  extra: { fix?: string | undefined; details?: Record<string, unknown> | undefined } = {},
): CheckResult {
  return {
    id,
    title,
    status,
    summary: oneLine(summary),
    ...(extra.fix === undefined ? {} : { fix: oneLine(extra.fix) }),
    ...(extra.details === undefined ? {} : { details: extra.details }),
  };
}

/** Text from the network or an error message on one line, without control characters. */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
}

/** A Node system error's code (ECONNREFUSED, ENOTFOUND, ...), if the error has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** An error's message, following `cause` when the outer message says little ("fetch failed"). */
export function describeError(error: unknown): string {
  return error instanceof Error ? readFailureCause(error).message : String(error);
}
