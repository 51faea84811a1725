import { resolveBaseUrl } from "../integration-api/base-url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { ConfigurationError, ResponseShapeError } from "../integration-api/errors.ts";
import { createIntegrationApi, type IntegrationApi } from "../integration-api/http.ts";
import { type Capabilities, capabilitiesOf } from "../sdk-api/api-selection.ts";
import { consoleOptionParameter, startupStatusWireNames } from "./console-record.ts";

/** Options of {@link createConsoleClient}. */
export type ConsoleClientOptions = IntegrationApiOptions;

/**
 * How the admin console treats a start-up status. Leave it out for progress text; `"error"`
 * (release YAML API 1.3.2 and later) makes the platform stop starting the application's
 * containers and show the message.
 */
export type StartupSeverity = "error";

/** The admin console's side of the Integration API: the start-up status tile and the options. */
export interface ConsoleClient {
  /**
   * What this client's API can serve: it talks to the Integration API only (the newer install
   * methods have no such service), so check `capabilities` of a Version or License client to
   * know whether this one applies.
   */
  readonly capabilities: Readonly<Capabilities>;
  /**
   * Shows `message` in the console's application-status tile (Status API,
   * `PUT /status/v1/startup`), e.g. the progress of an initial user sync. Not retried
   * automatically: a later status may already have replaced it.
   *
   * @throws TypeError before any request when `message` is not a string or `severity` is
   * neither undefined nor "error".
   */
  setStartupStatus(
    message: string,
    severity?: StartupSeverity,
    options?: CallOptions,
  ): Promise<void>;
  /**
   * A console option's raw value (Console API, `GET /console/v1/option?name=`), e.g.
   * `hostname` or `tls.authority.cert`. The platform answers an unknown name with 400, an
   * `HttpError`.
   */
  option(name: string, options?: CallOptions): Promise<string>;
}

/**
 * Creates a client of the platform's Status and Console APIs, with the TLS, time-out, retry and
 * error behaviour of the other clients. Both concern the admin console, and an application calls
 * both while it starts: hence one client.
 *
 * @example
 * ```ts
 * import { createConsoleClient } from "platform-integration/console";
 *
 * const platformConsole = createConsoleClient({ tls: { ca: process.env.PLATFORM_CA } });
 * await platformConsole.setStartupStatus("Importing users: 1,200 of 5,000");
 * ```
 */
export function createConsoleClient(options?: ConsoleClientOptions): ConsoleClient {
  const api = createIntegrationApi(options);
  return {
    capabilities: capabilitiesOf("integration"),
    async setStartupStatus(message, severity, call = {}) {
      if (typeof message !== "string") {
        throw new TypeError(`setStartupStatus() takes a message string, got ${typeof message}.`);
      }
      if (severity !== undefined && severity !== "error") {
        throw new TypeError(
          `The only documented severity is "error"; leave it out for progress text (got ${String(severity)}).`,
        );
      }
      await api.request("PUT", "/status/v1/startup", {
        ...call,
        json: JSON.stringify(startupStatus(message, severity)),
        retry: false,
      });
    },

    async option(name, call) {
      return (await readOption(api, name, call)).body;
    },
  };
}

/** The start-up status in its wire form (console-record.ts); no severity for progress text. */
function startupStatus(message: string, severity: StartupSeverity | undefined) {
  const { message: messageName, severity: severityName } = startupStatusWireNames;
  return severity === undefined
    ? { [messageName]: message }
    : { [messageName]: message, [severityName]: severity };
}

/** Reads a console option, its raw value as the body; the name travels as a query parameter. */
function readOption(api: IntegrationApi, name: string, call: CallOptions = {}) {
  if (typeof name !== "string" || name === "") {
    throw new TypeError("option() takes the name of a console option, a non-empty string.");
  }
  const query = new URLSearchParams({ [consoleOptionParameter]: name });
  return api.request("GET", `/console/v1/option?${query}`, {
    ...call,
    retry: true,
  });
}

/** Options of {@link fetchPlatformCa}. */
export interface FetchPlatformCaOptions extends IntegrationApiOptions, CallOptions {
  /**
   * Skip certificate verification for this one request: required when no CA is trusted yet,
   * which is the first time. See {@link fetchPlatformCa} for what this trusts.
   */
  trustOnFirstUse?: boolean | undefined;
}

const caOption = "tls.authority.cert";

/**
 * Fetches the CA certificate (PEM) that signs the platform's own certificate, from the Console
 * API's `tls.authority.cert` option, for the `tls.ca` option of every client.
 *
 * Trust on first use: the platform's certificate is self-signed, so the first fetch cannot verify
 * whom it talks to, and needs `trustOnFirstUse: true`. Whoever can intercept that one request
 * (on the network path between the container and the platform) can hand over their own CA, and
 * every later call would then trust them. Fetch it once, store it (a file on a volume, a
 * secret) and pass the stored copy as `tls.ca` from then on; a later call with `tls: { ca }`
 * verifies the connection, to pick up a renewed CA. Prefer giving the application the CA
 * through its release configuration (the console-setting template function), which involves no
 * network at all.
 *
 * @throws ConfigurationError when `trustOnFirstUse` is combined with `tls` or `fetch`.
 * @throws ResponseShapeError when the option holds no PEM certificate.
 *
 * @example
 * ```ts
 * import { fetchPlatformCa } from "platform-integration/console";
 *
 * // Once, at the first start; then read the stored file.
 * const ca = await fetchPlatformCa({ trustOnFirstUse: true });
 * await writeFile("/data/platform-ca.pem", ca);
 * ```
 */
export async function fetchPlatformCa(options: FetchPlatformCaOptions = {}): Promise<string> {
  const { trustOnFirstUse, signal, timeoutMs, ...apiOptions } = options;
  if (
    trustOnFirstUse === true &&
    (apiOptions.tls !== undefined || apiOptions.fetch !== undefined)
  ) {
    throw new ConfigurationError(
      "trustOnFirstUse skips verification itself: pass it without tls or fetch (or pass tls.ca without trustOnFirstUse to fetch over a verified connection).",
    );
  }
  // Over http: there is no certificate to skip, and the tls option would be refused.
  const skipVerification =
    trustOnFirstUse === true && resolveBaseUrl(apiOptions.baseUrl).startsWith("https:");
  const api = createIntegrationApi(
    skipVerification ? { ...apiOptions, tls: { rejectUnauthorized: false } } : apiOptions,
  );
  const call = {
    ...(signal === undefined ? {} : { signal }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
  const response = await readOption(api, caOption, call);
  const pem = response.body.trim();
  if (!/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----$/.test(pem)) {
    throw new ResponseShapeError(response, `${caOption} is not a PEM certificate`);
  }
  return `${pem}\n`;
}
