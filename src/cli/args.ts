// The CLI's option parsing: parseArgs's errors as usage errors, durations and counts, and the
// options of the commands that call a Provisioning API (its <url> and --read-user, checked by the
// platform's own rules).
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { httpUrlProblem, redactUrl } from "../internal/url.ts";
import { checkProvisioningUrl } from "../platform/outbound.ts";
import { checkReadUserTemplate } from "../platform/read-user.ts";
import { UsageError } from "./command.ts";

/**
 * node:util parseArgs in strict mode, its errors turned into UsageError so that the CLI prints
 * them with a pointer to --help and exits 2. `--help` itself never reaches a command: run.ts
 * answers it from the command's usage. With `positionals: false`, any positional is refused.
 */
export function parseCommandArgs<const Options extends ParseArgsOptionsConfig>(
  args: string[],
  options: Options,
  { positionals = true }: { positionals?: boolean } = {},
) {
  // biome-ignore lint/suspicious/noImplicitAnyLet: typed by the assignment, which may throw
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error));
  }
  const [extra] = parsed.positionals;
  if (!positionals && extra !== undefined) throw new UsageError(`Unexpected argument: ${extra}`);
  return parsed;
}

/** parseArgs's errors in one short line: Node's texts explain its API rather than the CLI's. */
function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (option === undefined) return message;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return /does not take an argument/.test(message)
      ? `${option} takes no value`
      : `${option} needs a value`;
  }
  return message;
}

/** A whole number from `min` to `max` from an option's text, or a UsageError. */
export function integerOption(
  value: string | undefined,
  name: string,
  {
    min,
    max = Number.MAX_SAFE_INTEGER,
    fallback,
  }: { min: number; max?: number; fallback?: number },
): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`Missing --${name}`);
    return fallback;
  }
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} takes a whole number ${range}, not "${value}"`);
  }
  return number;
}

/**
 * A duration from an option's text, in milliseconds: `500ms`, `10s`, `5m`, `1h` (decimals allowed),
 * or a bare number in `bareUnitMs` (the option's historic unit: milliseconds for --timeout,
 * seconds for --interval). At least 1 ms; a UsageError otherwise.
 */
export function durationOption(
  value: string | undefined,
  name: string,
  { fallback, bareUnitMs }: { fallback: number; bareUnitMs: 1 | 1000 },
): number {
  if (value === undefined) return fallback;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const unit = match?.[2] === undefined ? bareUnitMs : units[match[2] as keyof typeof units];
  const ms = match ? Number(match[1]) * unit : 0;
  if (!(ms >= 1) || !Number.isSafeInteger(Math.round(ms))) {
    const bare = bareUnitMs === 1 ? "milliseconds" : "seconds";
    throw new UsageError(
      `--${name} takes a time such as 500ms, 10s, 5m or 1h (a bare number is ${bare}), not "${value}"`,
    );
  }
  return Math.round(ms);
}

/** The options of every command that calls a Provisioning API: conformance and simulate. */
export const targetOptions = {
  timeout: { type: "string" },
  "read-user": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/**
 * The --help lines of {@link targetOptions}, aligned with the rest of a usage text; `timeoutReason`
 * says why the command's default time-out is what it is.
 */
export function targetOptionsUsage(defaultTimeoutMs: number, timeoutReason: string): string {
  return `  --read-user <url>  Read each user back to verify what was stored: a URL in which {uuid}
                     is replaced by the percent-encoded uuid; the application answers 200
                     with the user as JSON in the wire's snake_case names, or 404. A user
                     kept deactivated (with "deactivated_at") reads as deleted. A test aid
                     that the application serves only in its test environment (the SDK's
                     withReadUserRoute). The password and its format are not compared.
  --timeout <time>   How long one call may take: 500ms, 10s, 1m, or a number of milliseconds
${wrap(`(default ${defaultTimeoutMs / 1000}s: ${timeoutReason})`, " ".repeat(21), 96)}`;
}

/**
 * The command line of a command that calls a Provisioning API: the base URL (the one
 * positional), `--timeout` and `--read-user`, checked, plus the command's own options.
 */
export function parseTargetCommandLine<const Options extends ParseArgsOptionsConfig>(
  args: string[],
  options: Options,
  { defaultTimeoutMs }: { defaultTimeoutMs: number },
) {
  const { values, positionals } = parseCommandArgs(args, { ...options, ...targetOptions });
  const url = baseUrlArgument(positionals);
  const shared = values as { timeout?: string; "read-user"?: string };
  const timeoutMs = durationOption(shared.timeout, "timeout", {
    fallback: defaultTimeoutMs,
    bareUnitMs: 1,
  });
  const readUser = readUserOption(shared["read-user"]);
  return { values, url, timeoutMs, readUser };
}

/**
 * The command's one positional argument: the Provisioning API's base URL, as the platform's
 * provisioner setting holds it, checked by the clients' own rule (http(s), no user name or
 * password, no query). A UsageError otherwise.
 */
export function baseUrlArgument(positionals: string[]): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError("Missing <url>: the Provisioning API's base URL");
  if (extra.length > 0) throw new UsageError(`Unexpected argument: ${extra[0]}`);
  return provisioningUrlOption(value);
}

/** A Provisioning API base URL given on the command line, or a UsageError saying what is wrong. */
export function provisioningUrlOption(value: string, option?: string): string {
  const prefix = option === undefined ? "" : `--${option}: `;
  const problem = httpUrlProblem(value);
  if (problem === "not absolute" || problem === "not http") {
    throw new UsageError(`${prefix}Not an http(s) URL: ${redactUrl(value)}`);
  }
  try {
    checkProvisioningUrl(value);
  } catch (error) {
    throw new UsageError(`${prefix}${(error as Error).message}`);
  }
  return value;
}

/** A read-user URL template given as `--read-user`, or a UsageError saying what is wrong. */
export function readUserOption(template: string | undefined): string | undefined {
  try {
    return template === undefined ? undefined : checkReadUserTemplate(template);
  } catch (error) {
    throw new UsageError(`--read-user: ${(error as Error).message}`);
  }
}

/** Words in lines of at most `width` characters, each after `indent`. */
function wrap(text: string, indent: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, indent + line].join("\n");
}
