import { writeFile } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import { type FakeIdentityUser, fakeIdentityDefaults } from "../../clients/identity/fake.ts";
import { type FakeLicenseField, fakeLicenseDefault } from "../../clients/license/fake.ts";
import { fakeSdkLicenseWith } from "../../clients/license/fake-sdk-api.ts";
import type { FakeSdkMode } from "../../clients/sdk-api/fake-answers.ts";
import { fakeReleasesAfter } from "../../clients/version/fake.ts";
import { createFakeIntegrationApi } from "../../testing/fake-integration-api.ts";
import { createFakeSdkApi } from "../../testing/fake-sdk-api.ts";
import type { CommandIo } from "../command.ts";
import { createSelfSignedCertificate } from "../self-signed-certificate.ts";
import { type ServedFetch, serveFetch } from "../serve-fetch.ts";
import { clock, describeBody, describeEvent, printable } from "./mock-api-lines.ts";

// Serving `mock-api`: one fake or the other behind a local HTTP(S) server, its banner, and the
// wait for Ctrl+C. Both fakes are served, announced and stopped the same way (`serve`).

/** The command line of `mock-api`, read. */
export interface MockApiOptions {
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

/** The Integration API's fake, printing each audit event, login and start-up status. */
export async function serveIntegrationApi(options: MockApiOptions, io: CommandIo) {
  const line = (text: string) => io.stdout.write(`${clock()} ${text}\n`);
  const api = createFakeIntegrationApi({
    ...fakeReleasesAfter(options.version, options.updates),
    onAuditEvent: (event) => line(`audit ${describeEvent(event)}`),
    ...(options.users === undefined ? {} : { identity: { users: options.users, groups: [] } }),
    ...(options.licenseFields === undefined
      ? {}
      : { license: { ...fakeLicenseDefault, fields: options.licenseFields } }),
    onLogin: ({ username, authenticated }) =>
      line(`login ${printable(username)} ${authenticated ? "accepted" : "refused"}`),
    onStartupStatus: ({ message, severity }) =>
      line(
        `start-up status${severity === undefined ? "" : ` (${printable(severity)})`}: ${printable(message)}`,
      ),
    onUpdateApplied: (current) =>
      line(
        `update applied: now running ${current.version} (release sequence ${current.releaseSequence})`,
      ),
  });
  for (const [name, value] of options.consoleOptions) api.console.setOption(name, value);
  const pending = options.updates === 1 ? "1 pending update" : `${options.updates} pending updates`;
  const users = options.users ?? [fakeIdentityDefaults.user];
  return serve(options, io, {
    respond: api.respond,
    // The Console API serves the CA, so that fetchPlatformCa works against the mock.
    onCertificate: (cert) => api.console.setOption("tls.authority.cert", cert),
    banner: (served) => ({
      title: `Fake Integration API listening on ${served.baseUrl}`,
      details: [
        `  running ${options.version} (release sequence 1), ${pending}`,
        `  Identity API users: ${users.map(({ username }) => printable(username)).join(", ")}${options.users === undefined ? ` (password ${fakeIdentityDefaults.user.password})` : ""}`,
        ...(options.https ? certificateLines(options.certOut) : []),
      ],
      pointAt: `  export PLATFORM_INTEGRATIONAPI=${served.baseUrl}`,
      shown: "Audit events, logins and start-up statuses appear",
    }),
  });
}

/**
 * `--api sdk` or `kots`: the fake newer API (which also serves the admin console's license
 * endpoint), printing each write as it arrives, with what it sent.
 */
export async function serveSdkApi(options: MockApiOptions, io: CommandIo) {
  const { current, updates } = fakeReleasesAfter(options.version, options.updates);
  const api = createFakeSdkApi({
    current,
    // The newer API lists updates newest first.
    updates: updates.reverse(),
    ...(options.licenseFields === undefined
      ? {}
      : { license: fakeSdkLicenseWith(options.licenseFields) }),
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
  const mode = Object.entries(options.sdkMode)
    .filter(([, value]) => value === true)
    .map(([name]) => name);
  const kots = options.api === "kots";
  return serve(options, io, {
    respond,
    banner: (served) => ({
      title: kots
        ? `Fake admin console license endpoint (and newer API) listening on ${served.baseUrl}`
        : `Fake newer in-cluster API listening on ${served.baseUrl}`,
      details: [
        `  running ${options.version}, ${updates.length} pending update(s)${mode.length === 0 ? "" : `; ${mode.join(", ")}`}; service version ${api.mode.serviceVersion}`,
        "  switch modes or queue failures: POST /mock/v1/control",
        '  {"mode":{"readOnly":true,"airgap":false,"servedFromCache":true},"failNext":{"count":1,"status":503}}',
      ],
      pointAt: kots
        ? `  createLicenseClient({ api: "kots", baseUrl: "${served.baseUrl}" })`
        : `  export PLATFORM_SDK_API=${served.baseUrl}   # and leave PLATFORM_INTEGRATIONAPI unset`,
      shown: "Writes appear",
    }),
  });
}

/** What {@link serve} needs of one fake. */
interface Served {
  respond(request: Request): Promise<Response>;
  /** Called with the self-signed certificate of `--https`, before serving. */
  onCertificate?: (cert: string) => void;
  banner(served: ServedFetch): { title: string; details: string[]; pointAt: string; shown: string };
}

/**
 * Serves a fake until Ctrl+C: the certificate of `--https` (written to `--cert-out`), the
 * server, the banner; 1 when it cannot start, 0 when stopped.
 */
async function serve(options: MockApiOptions, io: CommandIo, fake: Served): Promise<number> {
  let served: ServedFetch;
  try {
    const tls = options.https ? await createSelfSignedCertificate() : undefined;
    if (tls !== undefined) fake.onCertificate?.(tls.cert);
    if (tls !== undefined && options.certOut !== undefined) {
      await writeFile(options.certOut, tls.cert);
    }
    served = await serveFetch(fake.respond, {
      host: options.host,
      port: options.port,
      ...(tls === undefined ? {} : { tls }),
      onError: (error) => io.stderr.write(`Request failed: ${String(error)}\n`),
    });
  } catch (error) {
    io.stderr.write(`${startFailure(error, options)}\n`);
    return 1;
  }
  const { title, details, pointAt, shown } = fake.banner(served);
  io.stdout.write(
    [
      title,
      ...details,
      "",
      "Point your application at it:",
      pointAt,
      "",
      `${shown} below as they arrive. Press Ctrl+C to stop.`,
      "",
    ].join("\n"),
  );
  await aborted(io.signal);
  await served.close();
  io.stdout.write("Stopped.\n");
  return 0;
}

/** How a client trusts the self-signed certificate of `--https`. */
function certificateLines(certOut: string | undefined): string[] {
  return [
    "  self-signed certificate for localhost, 127.0.0.1 and ::1: clients trust it",
    certOut === undefined
      ? "  with tls.ca once it is written (--cert-out FILE) or fetched from the console\n  (fetchPlatformCa({ trustOnFirstUse: true })), or skip verification (curl -k)"
      : `  with tls.ca: certificate written to ${resolvePath(certOut)}\n  export PLATFORM_CA="$(cat ${resolvePath(certOut)})"`,
  ];
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
