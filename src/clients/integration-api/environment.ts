// The one reader of the environment for the clients (PLATFORM_INTEGRATIONAPI in base-url.ts,
// PLATFORM_SDK_API and the "auto" choice in sdk-api/api-selection.ts, and the doctor's report):
// Node's and Bun's process.env, Deno.env, nothing on Workers, and one rule for a variable that
// cannot be read.
import { ConfigurationError } from "./errors.ts";

interface RuntimeGlobals {
  process?: { env?: Record<string, string | undefined> };
  Deno?: { env?: { get(name: string): string | undefined } };
}

/**
 * An environment variable, read now (a value set after import is seen): `env` when given (the
 * CLI's), else process.env, else Deno.env; undefined on a runtime without either (Workers).
 *
 * Deno without `--allow-env` throws on the read: that is a ConfigurationError naming the flag,
 * never a variable taken as unset. Taken as unset, it would silently choose for the application:
 * "auto" would pick the newer service on a legacy install, and a PLATFORM_SDK_API naming a renamed
 * service would be passed over for the default address, each failing later with a message that
 * names neither the flag nor the variable.
 *
 * @throws ConfigurationError when the runtime forbids the read, with both fixes: allow it, or
 * pass the `baseUrl` option (with it, no client reads the environment).
 */
export function readVariable(
  name: string,
  env?: Record<string, string | undefined>,
): string | undefined {
  if (env !== undefined) return env[name];
  const runtime = globalThis as RuntimeGlobals;
  try {
    return runtime.process?.env?.[name] ?? runtime.Deno?.env?.get(name);
  } catch (error) {
    throw new ConfigurationError(
      `Could not read the ${name} environment variable (${error instanceof Error ? error.message : String(error)}): allow it (deno run --allow-env=${name}) or pass the baseUrl option.`,
    );
  }
}

/**
 * Whether a variable is set to something other than blanks: the one rule by which the clients and
 * the doctor take a variable as given. Throws as {@link readVariable} does.
 */
export function isVariableSet(name: string, env?: Record<string, string | undefined>): boolean {
  return (readVariable(name, env) ?? "").trim() !== "";
}
