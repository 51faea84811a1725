import { fakeIdentityDefaults, fakeIdentityUserFromText } from "../../clients/identity/fake.ts";
import { fakeLicenseFieldFromText } from "../../clients/license/fake.ts";
import { integerOption, parseCommandArgs } from "../args.ts";
import { type Command, UsageError } from "../command.ts";
import { type MockApiOptions, serveIntegrationApi, serveSdkApi } from "./mock-api-serve.ts";

// `platform-integration mock-api`: its usage, its options and the choice of fake. Serving and
// printing are mock-api-serve.ts and mock-api-lines.ts; the fakes, and all they know of the
// records, are the client folders' (fake.ts).

const usage = `Usage: platform-integration mock-api [options]

Serves a local fake of the platform's Integration API (the Version, Audit, Identity, Status,
License and Console APIs), so that an application runs outside the platform: point
PLATFORM_INTEGRATIONAPI at the printed URL. Each audit event, login (never its password) and
start-up status is printed as it arrives; with --api sdk, each write (custom metrics, instance
tags, support bundle metadata) with the JSON it sent, a support bundle by its size. Stop it
with Ctrl+C.

The Identity API logs in user "${fakeIdentityDefaults.user.username}" with password "${fakeIdentityDefaults.user.password}" unless --user is given.

Options:
  --port <n>         Port to listen on (default 9880; 0 picks a free port)
  --host <address>   Address to listen on (default 127.0.0.1)
  --https            Serve HTTPS with a generated self-signed certificate, as the platform does
  --cert-out <file>  With --https: write that certificate (PEM) to <file>, for the clients' tls.ca
  --current-version <label>
                     Version label of the running release (default 1.0.0)
  --updates <n>      Number of pending updates to offer (default 0)
  --user <name:password>
                     A directory user the Identity API logs in, instead of the default
                     ${fakeIdentityDefaults.user.username}:${fakeIdentityDefaults.user.password} (repeatable)
  --license-field <name=value>
                     A field of the license the License API serves, instead of the default
                     max_users=100; an integer or true/false is typed so (repeatable)
  --console-option <name=value>
                     An option the Console API serves at GET /console/v1/option?name=<name>
                     (repeatable)
  --api <integration|sdk|kots>
                     Which API to serve (default integration). sdk: the platform's newer
                     in-cluster API (app info, status, updates, history, license and fields,
                     custom metrics, instance tags, support bundles); kots: the admin
                     console's compatibility license endpoint (served by the sdk fake too)
  --airgap           With --api sdk: air gap (no updates, no support bundle upload)
  --read-only        With --api sdk: read-only mode as the service has it: DELETE of a
                     metric, instance tags, bundle metadata and mock data answer 422;
                     POST/PATCH custom metrics answer 200 but are not stored
  --integration-mode With --api sdk: integration mode (app info, status, updates and
                     history serve the service's default mock data, marked so; replace it
                     with POST /api/v1/integration/mock-data)
  --service-version <v>
                     With --api sdk: the service version (default 1.19.0); older versions
                     answer 404 for support bundles (before 1.17.0) and their metadata (1.18.0)
  -h, --help         Show this help

Example:
  platform-integration mock-api --port 9880 --updates 2

Exit status: 0 when stopped (Ctrl+C), 1 when it could not start (the port taken, the address
not this machine's), 2 for a wrong command line.
`;

/**
 * `platform-integration mock-api`: the fake Integration API of `platform-integration/testing`
 * over HTTP or HTTPS, for running an application locally with PLATFORM_INTEGRATIONAPI set.
 */
export const mockApiCommand: Command = {
  name: "mock-api",
  summary:
    "Serve a local fake of the platform's Integration API (Version, Audit, Identity, Status, License, Console)",
  usage,
  servesUntilStopped: true,
  async run(args, io) {
    const options = parseOptions(args);
    return options.api === "integration"
      ? serveIntegrationApi(options, io)
      : serveSdkApi(options, io);
  },
};

export function parseOptions(args: string[]): MockApiOptions {
  const { values } = parseCommandArgs(
    args,
    {
      port: { type: "string" },
      host: { type: "string" },
      https: { type: "boolean" },
      "cert-out": { type: "string" },
      "current-version": { type: "string" },
      updates: { type: "string" },
      user: { type: "string", multiple: true },
      "license-field": { type: "string", multiple: true },
      "console-option": { type: "string", multiple: true },
      api: { type: "string" },
      airgap: { type: "boolean" },
      "read-only": { type: "boolean" },
      "integration-mode": { type: "boolean" },
      "service-version": { type: "string" },
    },
    { positionals: false },
  );
  const version = values["current-version"] ?? "1.0.0";
  if (version.trim() === "") throw new UsageError("--current-version needs a non-empty label.");
  const certOut = values["cert-out"];
  if (certOut !== undefined && values.https !== true) {
    throw new UsageError("--cert-out writes the certificate of --https: add --https.");
  }
  const api = values.api ?? "integration";
  if (api !== "integration" && api !== "sdk" && api !== "kots") {
    throw new UsageError("--api takes integration, sdk or kots.");
  }
  const sdkFlags = [values.airgap, values["read-only"], values["integration-mode"]];
  if (
    api === "integration" &&
    (sdkFlags.includes(true) || values["service-version"] !== undefined)
  ) {
    throw new UsageError(
      "--airgap, --read-only, --integration-mode and --service-version describe the newer API: add --api sdk.",
    );
  }
  const serviceVersion = values["service-version"];
  if (serviceVersion !== undefined && !/^v?\d+\.\d+\.\d+/.test(serviceVersion)) {
    throw new UsageError("--service-version takes a version such as 1.19.0.");
  }
  return {
    api,
    sdkMode: {
      airgap: values.airgap === true,
      readOnly: values["read-only"] === true,
      integrationMode: values["integration-mode"] === true,
      ...(serviceVersion === undefined ? {} : { serviceVersion }),
    },
    port: integerOption(values.port, "port", { min: 0, max: 65535, fallback: 9880 }),
    host: values.host ?? "127.0.0.1",
    https: values.https === true,
    certOut,
    version,
    updates: integerOption(values.updates, "updates", { min: 0, max: 1000, fallback: 0 }),
    users: values.user?.map((entry: string) =>
      parsedOr(fakeIdentityUserFromText(entry), "--user takes name:password, both non-empty."),
    ),
    licenseFields: values["license-field"]?.map((entry: string) =>
      parsedOr(fakeLicenseFieldFromText(entry), "--license-field takes name=value."),
    ),
    consoleOptions: (values["console-option"] ?? []).map((entry: string) => {
      const equals = entry.indexOf("=");
      if (equals < 1) throw new UsageError("--console-option takes name=value.");
      return [entry.slice(0, equals), entry.slice(equals + 1)] as [string, string];
    }),
  };
}

/** What a fake parsed from an argument, or a UsageError that says how to write it. */
function parsedOr<Value>(parsed: Value | undefined, message: string): Value {
  if (parsed === undefined) throw new UsageError(message);
  return parsed;
}
