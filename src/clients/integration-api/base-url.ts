// Where the Integration API is: the baseUrl option, else PLATFORM_INTEGRATIONAPI, checked as an origin.
import { normalizeApiBaseUrl } from "../../internal/url.ts";
import { readVariable } from "./environment.ts";
import { ConfigurationError } from "./errors.ts";

/** The environment variable in which the platform gives the application its Integration API URL. */
export const baseUrlVariable = "PLATFORM_INTEGRATIONAPI";

/**
 * The base URL of the platform's API, checked and normalized by `normalizeApiBaseUrl` (an origin,
 * without a path): the `baseUrl` option, else the environment variable, read now rather than at
 * import so that a value set later is seen.
 * Runtimes without `process` (Workers) read nothing and need the option.
 */
export function resolveBaseUrl(option: string | URL | undefined): string {
  const { value, source } =
    option === undefined
      ? {
          value: readVariable(baseUrlVariable),
          source: `the ${baseUrlVariable} environment variable`,
        }
      : { value: String(option), source: "the baseUrl option" };
  if (value === undefined || value.trim() === "") {
    throw new ConfigurationError(
      `No Integration API base URL: pass the baseUrl option or set the ${baseUrlVariable} environment variable (the platform sets it in the application's container).`,
    );
  }
  if (value === lastValue) return lastBaseUrl;
  try {
    lastBaseUrl = normalizeApiBaseUrl(value);
  } catch (error) {
    throw new ConfigurationError(`${source} ${(error as Error).message}`);
  }
  lastValue = value;
  return lastBaseUrl;
}

// The last value read and its normalized form: every request reads the base URL, which almost
// never changes, so each value is parsed and checked once rather than on every audit delivery.
let lastValue: string | undefined;
let lastBaseUrl = "";
