import type { ParseArgsOptionsConfig } from "node:util";
import { baseUrlArgument, durationOption, parseCommandArgs } from "./args.ts";
import { type CommandIo, UsageError } from "./command.ts";

/** Where `--scim` commands read the token when `--token` is not given: out of the process list. */
export const scimTokenVariable = "SCIM_TOKEN";

/** Whether a command line asks for the SCIM form of a command (`--scim <url>`). */
export const wantsScim = (args: string[]) =>
  args.some((arg) => arg === "--scim" || arg.startsWith("--scim="));

/** The --help lines of the SCIM options every `--scim` command takes. */
export const scimOptionsUsage = `  --scim <url>       The SCIM service's base URL, the part before /Users: https://host/scim/v2
  --token <token>    The bearer token the identity provider would hold (or $${scimTokenVariable},
                     which keeps it out of the process list)`;

/**
 * The command line of a command's SCIM form: `--scim <url>` (no positional), `--token` or
 * $SCIM_TOKEN (required), `--timeout`, plus the command's own options.
 */
export function parseScimCommandLine<const Options extends ParseArgsOptionsConfig>(
  args: string[],
  options: Options,
  { defaultTimeoutMs, io }: { defaultTimeoutMs: number; io: CommandIo },
) {
  const { values } = parseCommandArgs(
    args,
    {
      ...options,
      scim: { type: "string" },
      token: { type: "string" },
      timeout: { type: "string" },
    },
    { positionals: false },
  );
  const shared = values as { scim?: string; token?: string; timeout?: string };
  const url = baseUrlArgument([shared.scim ?? ""]);
  const token = shared.token ?? io.env[scimTokenVariable];
  if (token === undefined || token === "") {
    throw new UsageError(
      `Missing --token: the SCIM service's bearer token (or set $${scimTokenVariable})`,
    );
  }
  const timeoutMs = durationOption(shared.timeout, "timeout", {
    fallback: defaultTimeoutMs,
    bareUnitMs: 1,
  });
  return { values, url, token, timeoutMs };
}
