import { writeFile } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import type { FakeAuditEvent } from "../../clients/audit/fake.ts";
import { type FakeIdentityUser, fakeIdentityDefaults } from "../../clients/identity/fake.ts";
import { type FakeLicenseField, fakeLicenseDefault } from "../../clients/license/fake.ts";
import type { FakeUpdateInit } from "../../clients/version/fake.ts";
import { createFakeIntegrationApi } from "../../testing/fake-integration-api.ts";
import {
  createFakeSdkApi,
  type FakeSdkMode,
  fakeSdkLicenseDefault,
} from "../../testing/fake-sdk-api.ts";
import { integerOption, parseCommandArgs } from "../args.ts";
import { type Command, type CommandIo, UsageError } from "../command.ts";
import { createSelfSignedCertificate } from "../self-signed-certificate.ts";
import { type ServedFetch, serveFetch } from "../serve-fetch.ts";

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

interface MockApiOptions {
  port: number;
  host: string;
  https: boolean;
  certOut: string | undefined;
  version: string;
  updates: number;
  users: FakeIdentityUser[] | undefined;
  licenseFields: FakeLicenseField[] | undefined;
  consoleOptions: Array<[string, string]>;
  api: "integration" | "sdk" | "kots";
  sdkMode: FakeSdkMode;
}

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
    if (options.api !== "integration") return serveSdk(options, io);
    const api = createFakeIntegrationApi({
      current: { version: options.version, releaseSequence: 1 },
      updates: pendingUpdates(options.version, options.updates),
      onAuditEvent: (event) => io.stdout.write(`${clock()} audit ${describeEvent(event)}\n`),
      ...(options.users === undefined ? {} : { identity: { users: options.users, groups: [] } }),
      ...(options.licenseFields === undefined
        ? {}
        : { license: { ...fakeLicenseDefault, fields: options.licenseFields } }),
      onLogin: ({ username, authenticated }) =>
        io.stdout.write(
          `${clock()} login ${printable(username)} ${authenticated ? "accepted" : "refused"}\n`,
        ),
      onStartupStatus: ({ message, severity }) =>
        io.stdout.write(
          `${clock()} start-up status${severity === undefined ? "" : ` (${printable(severity)})`}: ${printable(message)}\n`,
        ),
      onUpdateApplied: (current) =>
        io.stdout.write(
          `${clock()} update applied: now running ${current.version} (release sequence ${current.releaseSequence})\n`,
        ),
    });

    for (const [name, value] of options.consoleOptions) api.console.setOption(name, value);
    let served: ServedFetch;
    try {
      const tls = options.https ? await createSelfSignedCertificate() : undefined;
      // The Console API serves the CA, so that fetchPlatformCa works against the mock.
      if (tls !== undefined) api.console.setOption("tls.authority.cert", tls.cert);
      if (tls !== undefined && options.certOut !== undefined) {
        await writeFile(options.certOut, tls.cert);
      }
      served = await serveFetch(api.respond, {
        host: options.host,
        port: options.port,
        ...(tls === undefined ? {} : { tls }),
        onError: (error) => io.stderr.write(`Request failed: ${String(error)}\n`),
      });
    } catch (error) {
      io.stderr.write(`${startFailure(error, options)}\n`);
      return 1;
    }

    const pending =
      options.updates === 1 ? "1 pending update" : `${options.updates} pending updates`;
    io.stdout.write(
      [
        `Fake Integration API listening on ${served.baseUrl}`,
        `  running ${options.version} (release sequence 1), ${pending}`,
        `  Identity API users: ${(options.users ?? [fakeIdentityDefaults.user]).map(({ username }) => printable(username)).join(", ")}${options.users === undefined ? ` (password ${fakeIdentityDefaults.user.password})` : ""}`,
        ...(options.https
          ? [
              "  self-signed certificate for localhost, 127.0.0.1 and ::1: clients trust it",
              options.certOut === undefined
                ? "  with tls.ca once it is written (--cert-out FILE) or fetched from the console\n  (fetchPlatformCa({ trustOnFirstUse: true })), or skip verification (curl -k)"
                : `  with tls.ca: certificate written to ${resolvePath(options.certOut)}\n  export PLATFORM_CA="$(cat ${resolvePath(options.certOut)})"`,
            ]
          : []),
        "",
        "Point your application at it:",
        `  export PLATFORM_INTEGRATIONAPI=${served.baseUrl}`,
        "",
        "Audit events, logins and start-up statuses appear below as they arrive. Press Ctrl+C to stop.",
        "",
      ].join("\n"),
    );
    await aborted(io.signal);
    await served.close();
    io.stdout.write("Stopped.\n");
    return 0;
  },
};

function parseOptions(args: string[]): MockApiOptions {
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
    users: userOptions(values.user),
    licenseFields: licenseFieldOptions(values["license-field"]),
    consoleOptions: (values["console-option"] ?? []).map((entry: string) => {
      const equals = entry.indexOf("=");
      if (equals < 1) throw new UsageError("--console-option takes name=value.");
      return [entry.slice(0, equals), entry.slice(equals + 1)] as [string, string];
    }),
  };
}

/**
 * `--api sdk` or `kots`: the fake newer API (which also serves the admin console's license
 * endpoint), printing each write as it arrives, with what it sent.
 */
async function serveSdk(options: MockApiOptions, io: CommandIo): Promise<number> {
  const updates = pendingUpdates(options.version, options.updates).map(
    ({ version, releaseNotes }) => ({ version, releaseNotes: releaseNotes ?? "" }),
  );
  const api = createFakeSdkApi({
    current: { version: options.version, releaseSequence: 1 },
    updates: updates.reverse(),
    ...(options.licenseFields === undefined
      ? {}
      : {
          license: {
            ...fakeSdkLicenseDefault,
            fields: options.licenseFields.map(({ field, value }) => ({
              name: field,
              ...(value === null ? {} : { value }),
              valueType:
                typeof value === "number"
                  ? "Integer"
                  : typeof value === "boolean"
                    ? "Boolean"
                    : "String",
            })),
          },
        }),
    ...options.sdkMode,
  });
  const respond = async (request: Request) => {
    // What was sent, read from a copy before the fake reads the request.
    const sent =
      request.method === "GET" || request.method === "HEAD"
        ? undefined
        : await describeBody(request.clone());
    const response = await api.respond(request);
    if (sent !== undefined) {
      const { pathname } = new URL(request.url);
      const replayed = response.headers.get("x-replicated-rate-limited") === "true";
      io.stdout.write(
        `${clock()} ${request.method} ${printable(pathname)} answered ${response.status}${replayed ? " (replayed from the 60-second cache)" : ""}${sent === "" ? "" : `: ${sent}`}\n`,
      );
    }
    return response;
  };
  let served: ServedFetch;
  try {
    const tls = options.https ? await createSelfSignedCertificate() : undefined;
    if (tls !== undefined && options.certOut !== undefined)
      await writeFile(options.certOut, tls.cert);
    served = await serveFetch(respond, {
      host: options.host,
      port: options.port,
      ...(tls === undefined ? {} : { tls }),
      onError: (error) => io.stderr.write(`Request failed: ${String(error)}\n`),
    });
  } catch (error) {
    io.stderr.write(`${startFailure(error, options)}\n`);
    return 1;
  }
  const mode = Object.entries(options.sdkMode)
    .filter(([, value]) => value === true)
    .map(([name]) => name);
  const kots = options.api === "kots";
  io.stdout.write(
    [
      kots
        ? `Fake admin console license endpoint (and newer API) listening on ${served.baseUrl}`
        : `Fake newer in-cluster API listening on ${served.baseUrl}`,
      `  running ${options.version}, ${updates.length} pending update(s)${mode.length === 0 ? "" : `; ${mode.join(", ")}`}; service version ${api.mode.serviceVersion}`,
      "  switch modes or queue failures: POST /mock/v1/control",
      '  {"mode":{"readOnly":true,"airgap":false,"servedFromCache":true},"failNext":{"count":1,"status":503}}',
      "",
      "Point your application at it:",
      kots
        ? `  createLicenseClient({ api: "kots", baseUrl: "${served.baseUrl}" })`
        : `  export PLATFORM_SDK_API=${served.baseUrl}   # and leave PLATFORM_INTEGRATIONAPI unset`,
      "",
      "Writes appear below as they arrive. Press Ctrl+C to stop.",
      "",
    ].join("\n"),
  );
  await aborted(io.signal);
  await served.close();
  io.stdout.write("Stopped.\n");
  return 0;
}

/** `--license-field name=value`: an integer is an Integer field, true or false a Boolean one. */
function licenseFieldOptions(values: unknown): FakeLicenseField[] | undefined {
  if (!Array.isArray(values)) return undefined;
  return values.map((entry: string) => {
    const equals = entry.indexOf("=");
    if (equals < 1) throw new UsageError("--license-field takes name=value.");
    const text = entry.slice(equals + 1);
    const value = /^-?\d{1,15}$/.test(text)
      ? Number(text)
      : text === "true" || text === "false"
        ? text === "true"
        : text;
    return { field: entry.slice(0, equals), value };
  });
}

/** `--user name:password`, split at the first colon (a password may contain colons). */
function userOptions(values: string[] | undefined): FakeIdentityUser[] | undefined {
  return values?.map((value) => {
    const colon = value.indexOf(":");
    if (colon < 1 || colon === value.length - 1) {
      throw new UsageError("--user takes name:password, both non-empty.");
    }
    return { username: value.slice(0, colon), password: value.slice(colon + 1) };
  });
}

/** Labels that follow the current one: 1.0.0 is followed by 1.0.1, 1.0.2; "beta" by beta.1. */
function pendingUpdates(version: string, count: number): FakeUpdateInit[] {
  const trailing = /^(.*?)(\d+)$/.exec(version);
  return Array.from({ length: count }, (_, index) => {
    const step = index + 1;
    const label = trailing ? `${trailing[1]}${Number(trailing[2]) + step}` : `${version}.${step}`;
    return { version: label, releaseSequence: 1 + step, releaseNotes: `Release notes of ${label}` };
  });
}

function clock(): string {
  return new Date().toTimeString().slice(0, 8);
}

/**
 * One line per event: the action first, then every field. Values come from the network, so they
 * are quoted and escaped unless plainly safe: no control character reaches the terminal.
 */
function describeEvent(event: FakeAuditEvent): string {
  const { extra, action, ...documented } = event;
  const fields = [...Object.entries(documented), ...Object.entries(extra ?? {})].map(
    ([key, value]) => `${printable(key)}=${printable(value)}`,
  );
  return [action === undefined ? "(no action)" : printable(action), ...fields].join(" ");
}

const secretKey = /pass(word)?|secret|token|credential|authorization/i;
const bodyShown = 500;

/**
 * A write's body for its line: JSON compact, with the value of any key that names a secret
 * replaced (the newer API takes none, but a tester's control call might carry one), cut after
 * 500 characters; anything else (a support bundle) by its size. Empty for no body.
 */
async function describeBody(request: Request): Promise<string> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0) return "";
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    const type = request.headers.get("content-type");
    return `(${bytes.length} bytes${type === null ? "" : ` of ${printable(type)}`})`;
  }
  const text = escapeControls(
    JSON.stringify(value, (key, inner: unknown) =>
      key !== "" && secretKey.test(key) ? "[redacted]" : inner,
    ),
  );
  return text.length > bodyShown ? `${text.slice(0, bodyShown)}… (${bytes.length} bytes)` : text;
}

function printable(value: unknown): string {
  if (typeof value === "string" && /^[\w.@:/+-]+$/.test(value)) return value;
  return escapeControls(JSON.stringify(value) ?? String(value));
}

/** JSON escapes C0 controls; C1 controls and line separators are escaped here. */
function escapeControls(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function startFailure(error: unknown, options: MockApiOptions): string {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${options.host}:${options.port}`;
  if (code === "EADDRINUSE") {
    return `Port ${options.port} is already in use on ${options.host}: choose another with --port (0 picks a free one).`;
  }
  if (code === "EACCES") {
    return `No permission to listen on ${where}: choose a port above 1023 with --port.`;
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return `${options.host} is not an address of this machine: choose another with --host.`;
  }
  return error instanceof Error ? error.message : `Could not listen on ${where}: ${String(error)}`;
}

function aborted(signal: CommandIo["signal"]): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}
