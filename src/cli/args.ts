import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { checkReadUserTemplate } from "../testing/read-user.ts";
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
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const [extra] = parsed.positionals;
  if (!positionals && extra !== undefined) throw new UsageError(`Unexpected argument: ${extra}`);
  return parsed;
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

/** The options of every command that calls a Provisioning API: conformance and simulate. */
export const targetOptions = {
  timeout: { type: "string" },
  "read-user": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** The --help lines of {@link targetOptions}, aligned with the rest of a usage text. */
export function targetOptionsUsage(defaultTimeoutMs: number): string {
  return `  --read-user <url>  Read each user back to verify what was stored: a URL in which {uuid}
                     is replaced by the percent-encoded uuid; the application answers 200
                     with the user as JSON in the wire's snake_case names, or 404. A test aid
                     that the application serves only in its test environment (the SDK's
                     withReadUserRoute). The password and its format are not compared.
  --timeout <ms>     How long one call may take (default ${defaultTimeoutMs})`;
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
  const timeoutMs = integerOption(shared.timeout, "timeout", {
    min: 1,
    fallback: defaultTimeoutMs,
  });
  const template = shared["read-user"];
  let readUser: string | undefined;
  try {
    readUser = template === undefined ? undefined : checkReadUserTemplate(template);
  } catch (error) {
    throw new UsageError(`--read-user: ${(error as Error).message}`);
  }
  return { values, url, timeoutMs, readUser };
}

/**
 * The command's one positional argument: the Provisioning API's base URL, http(s), as the
 * platform's provisioner setting holds it. A UsageError otherwise.
 */
export function baseUrlArgument(positionals: string[]): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError("Missing <url>: the Provisioning API's base URL");
  if (extra.length > 0) throw new UsageError(`Unexpected argument: ${extra[0]}`);
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    throw new UsageError(`Not an http(s) URL: ${value}`);
  }
  return value;
}
