import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { UsageError } from "./command.ts";

/**
 * node:util parseArgs in strict mode, with positionals, its errors turned into UsageError so
 * that the CLI prints them with a pointer to --help and exits 2.
 */
export function parseCommandArgs<const Options extends ParseArgsOptionsConfig>(
  args: string[],
  options: Options,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A whole number of at least `min` from an option's text, or a UsageError. */
export function integerOption(
  value: string | undefined,
  name: string,
  { min, fallback }: { min: number; fallback?: number },
): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`Missing --${name}`);
    return fallback;
  }
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(`--${name} takes a whole number of at least ${min}, not "${value}"`);
  }
  return number;
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
