// The doctor's checks over HTTP: the Version API and the clock through the Integration API layer,
// the audit event through the Audit client, the ping and the read route through the platform's
// outbound layer, and which API answers.
import { hostname } from "node:os";
import { createAuditClient } from "../../clients/audit/audit-client.ts";
import type { TlsOptions } from "../../clients/integration-api/client-options.ts";
import {
  isCallTimeoutError,
  isHttpError,
  isNetworkError,
  isResponseShapeError,
} from "../../clients/integration-api/errors.ts";
import { createIntegrationApi } from "../../clients/integration-api/http.ts";
import { capabilitiesOf, probeSdkService } from "../../clients/sdk-api/api-selection.ts";
import { readCurrentVersion, readUpdates } from "../../clients/version/read-version.ts";
import { readSdkCurrentVersion, readSdkUpdates } from "../../clients/version/sdk-api-version.ts";
import { joinUrl } from "../../internal/url.ts";
import { checkProvisioningUrl, exchange, maxAnswerBytes } from "../../platform/outbound.ts";
import { connectProvisioning } from "../../platform/provisioning-api-client.ts";
import { type CheckResult, describeError, oneLine, result } from "./check.ts";
import type { ProbeOptions } from "./network.ts";

/** How the doctor reaches the Integration API: as the SDK's clients would, without retries. */
export interface ApiSettings extends ProbeOptions {
  baseUrl: string;
  tls: TlsOptions | undefined;
  /** Where the base URL came from, for fixes: `PLATFORM_INTEGRATIONAPI` or `--base-url`. */
  source: string;
}

/** How fixes name the API expected at the address: by where the address came from. */
function apiTitle(settings: ApiSettings): string {
  return settings.source === "PLATFORM_SDK_API"
    ? "the platform's newer in-cluster SDK service"
    : "the Integration API";
}

/** The action of the doctor's test event: recognisable in the platform's audit log. */
export const testEventAction = "platform-integration.doctor.test";

/** Skew below this is the Date header's one-second resolution and the round trip: fine. */
const skewWarnMs = 5_000;
/** Skew above this breaks certificate validity checks and the audit log's order. */
const skewFailMs = 5 * 60_000;

/**
 * Calls GET /version/v1/current (and /updates) through the SDK's own HTTP layer and `tls`
 * settings, and measures the clock skew against the answer's Date header.
 */
export async function checkVersionApi(settings: ApiSettings): Promise<CheckResult[]> {
  const api = singleAttemptApi(settings);
  const title = "Version API answers";
  const call = { signal: settings.signal, retry: false };
  const sent = Date.now();
  try {
    const response = await api.request("GET", "/version/v1/current", call);
    const clock = checkClock(response.headers.get("date"), sent, Date.now());
    const current = readCurrentVersion(response);
    const updates = await api
      .request("GET", "/version/v1/updates", call)
      .then((answer) => `${readUpdates(answer).updates.length} pending`)
      .catch((error: unknown) => `updates not read: ${describeError(error)}`);
    const summary = `${current.version} (release sequence ${current.releaseSequence}, installed ${current.installDate.text}); updates: ${updates}`;
    return [
      result("version", title, "pass", summary, {
        details: {
          version: current.version,
          releaseSequence: current.releaseSequence,
          installDate: current.installDate.text,
        },
      }),
      clock,
    ];
  } catch (error) {
    const answered = isHttpError(error) ? error.headers.get("date") : null;
    const clock =
      answered === null
        ? result("clock", "Clock agrees with the API", "skip", "no answer with a Date header")
        : checkClock(answered, sent, Date.now());
    return [versionFailure(error, settings), clock];
  }
}

function versionFailure(error: unknown, settings: ApiSettings): CheckResult {
  const title = "Version API answers";
  const url = `${settings.baseUrl}/version/v1/current`;
  if (isHttpError(error)) {
    const fix =
      error.status === 404
        ? `The Version API is not under this URL: check that ${settings.source} names the platform's Integration API and not another service.`
        : `The API refused the call (${error.status}): check that ${settings.source} names the platform's Integration API and not a proxy or another service.`;
    return result(
      "version",
      title,
      "fail",
      `GET ${url} answered ${error.status}${bodyExcerpt(error.body)}`,
      { fix, details: { status: error.status } },
    );
  }
  if (isResponseShapeError(error)) {
    return result("version", title, "fail", `GET ${url} answered, but ${oneLine(error.message)}`, {
      fix: `Something other than ${apiTitle(settings)} answers at ${settings.baseUrl}: check the host, port and path in ${settings.source}.`,
    });
  }
  if (isCallTimeoutError(error)) {
    return result(
      "version",
      title,
      "fail",
      `GET ${url}: no answer within ${settings.timeoutMs} ms`,
      {
        fix: `The port accepts connections but the API does not answer: check that ${apiTitle(settings)} is healthy.`,
      },
    );
  }
  const fix = isNetworkError(error)
    ? "The call failed below HTTP: see the checks above (host, port, TLS)."
    : `Check ${settings.source}.`;
  return result("version", title, "fail", `GET ${url} failed: ${describeError(error)}`, { fix });
}

function bodyExcerpt(body: string): string {
  const text = oneLine(body);
  if (text === "") return "";
  return `: ${text.length > 80 ? `${text.slice(0, 79)}…` : text}`;
}

/** Compares the Date header with the local clock at the middle of the round trip. */
export function checkClock(date: string | null, sent: number, received: number): CheckResult {
  const title = "Clock agrees with the API";
  const server = date === null ? Number.NaN : Date.parse(date);
  if (Number.isNaN(server)) {
    return result(
      "clock",
      title,
      "warn",
      "the answer had no valid Date header: skew not measured",
      {
        fix: "Nothing to do for the SDK; compare this machine's time with the platform's by hand if in doubt.",
      },
    );
  }
  const skewMs = Math.round((received + sent) / 2 - server);
  const size = Math.abs(skewMs);
  // The header counts whole seconds, so up to a second of skew is its rounding.
  const summary =
    size < 1_000
      ? `this machine's clock agrees with the API's to the second (Date: ${date})`
      : `this machine's clock is ${(size / 1000).toFixed(0)} s ${skewMs > 0 ? "ahead of" : "behind"} the API (Date: ${date})`;
  const details = { skewMs };
  if (size <= skewWarnMs) return result("clock", title, "pass", summary, { details });
  const fix =
    "Synchronise this machine's clock (NTP): certificate validity and the audit log's order depend on it.";
  return result("clock", title, size > skewFailMs ? "fail" : "warn", summary, { fix, details });
}

/** Writes one audit event that says plainly what it is, with `send()`: no queue, no retries. */
export async function checkAuditEvent(settings: ApiSettings): Promise<CheckResult> {
  const title = "Audit API accepts an event";
  const audit = createAuditClient({
    baseUrl: settings.baseUrl,
    tls: settings.tls,
    timeoutMs: settings.timeoutMs,
  });
  const event = {
    action: testEventAction,
    name: "platform-integration.doctor",
    title: "Test event from platform-integration doctor",
    description: `Written by "platform-integration doctor --audit-test-event" on ${hostname()} at ${new Date().toISOString()} to check the audit integration; no user acted.`,
  };
  try {
    await audit.send(event, { signal: settings.signal });
    return result("audit", title, "pass", `wrote one test event, action ${testEventAction}`, {
      details: { event },
    });
  } catch (error) {
    const status = isHttpError(error) ? ` (${error.status})` : "";
    return result(
      "audit",
      title,
      "fail",
      `POST ${settings.baseUrl}/audit/v1/event failed${status}: ${describeError(error)}`,
      {
        fix: isHttpError(error)
          ? "The Audit API refused the event: check that the URL names the platform's Integration API."
          : "The call failed below HTTP: see the checks above (host, port, TLS).",
      },
    );
  } finally {
    await audit.close({ timeoutMs: 0 });
  }
}

/** GET {provisioner}/v1/ping from here, as the platform calls it before every sync. */
export async function checkProvisionerPing(
  provisioner: string,
  { timeoutMs, signal }: ProbeOptions,
): Promise<CheckResult> {
  const title = "Provisioning API answers ping";
  // The URL the client calls, by the client's own rule.
  const url = joinUrl(checkProvisioningUrl(provisioner), "/v1/ping");
  const answer = await connectProvisioning(provisioner, { timeoutMs })(
    { method: "GET", path: "/v1/ping" },
    signal,
  );
  if (answer.error !== undefined) {
    return result("provisioner", title, "fail", `GET ${url}: ${answer.error}`, {
      fix: "Check the provisioner URL's scheme, host and port: the platform calls it from its own network, so it must be reachable from there too.",
    });
  }
  if (answer.status === 204) {
    return result("provisioner", title, "pass", `GET ${url} answered 204`);
  }
  const fixes: Record<number, string> = {
    404: "Nothing serves /v1/ping under this URL: the provisioner URL must include the path where the handler is mounted (e.g. https://host/ldap/auth), and the handler's basePath must match it.",
    503: "The application answers 503: its store is not ready (store.ready() returned false), so the platform postpones the sync.",
  };
  return result("provisioner", title, "fail", `GET ${url} answered ${answer.status}, not 204`, {
    fix:
      fixes[answer.status] ??
      "ping must answer 204: the platform pauses the sync on any other answer.",
  });
}

/**
 * Reads a uuid that cannot exist through the conformance checker's read route (a URL template
 * with `{uuid}`): it must answer 404. The doctor writes no user, so a found user is not checked.
 */
export async function checkReadRoute(
  template: string,
  { timeoutMs, signal }: ProbeOptions,
): Promise<CheckResult> {
  const title = "Read route answers 404 for an unknown user";
  const uuid = `doctor-${crypto.randomUUID()}`;
  const url = template.replaceAll("{uuid}", encodeURIComponent(uuid));
  // The read route's own reader would judge a 200's body; the doctor writes no user, so only the
  // status counts, through the same outbound layer (time-out, no redirect followed, the cap).
  const answer = await exchange(
    fetch,
    { url, method: "GET", headers: { accept: "application/json" } },
    { timeoutMs, maxBytes: maxAnswerBytes, signal },
  );
  if (answer.error !== undefined) {
    return result("read-user", title, "fail", `GET ${url} failed: ${answer.error}`, {
      fix: "Check the read route's scheme, host and port: it must be reachable from here.",
    });
  }
  if (answer.status === 404) {
    return result(
      "read-user",
      title,
      "pass",
      `GET ${url} answered 404 (a stored user's answer is not checked: the doctor writes no user)`,
    );
  }
  return result("read-user", title, "fail", `GET ${url} answered ${answer.status}, not 404`, {
    fix: "The read route must answer 404 for a uuid it does not store and 200 with the user's JSON otherwise: check the template's path and {uuid}.",
  });
}

/** What each API serves, in words, for the doctor's report. */
function describeCapabilities(kind: "integration" | "sdk"): { serves: string; lacks: string } {
  const capabilities = capabilitiesOf(kind);
  const names = Object.keys(capabilities) as (keyof typeof capabilities)[];
  const words = (value: boolean) =>
    names
      .filter((name) => capabilities[name] === value)
      .map((name) => name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`))
      .join(", ");
  return { serves: words(true), lacks: words(false) };
}

/** The check that says which API answers and what it can do. */
export function apiResult(kind: "integration" | "sdk", serviceVersion?: string): CheckResult {
  const { serves, lacks } = describeCapabilities(kind);
  const name =
    kind === "integration"
      ? 'the platform\'s Integration API (clients: api "integration")'
      : `the platform's newer in-cluster SDK API${serviceVersion ? ` ${serviceVersion}` : ""} (clients: api "sdk")`;
  return result("api", "Which API answers", "pass", `${name}; serves ${serves}; not ${lacks}`, {
    details: { api: kind, ...(serviceVersion ? { serviceVersion } : {}) },
  });
}

/**
 * Whether the newer in-cluster SDK API answers here (its GET /healthz answers
 * `{"version":…}`), and its version (`""` when unreadable); undefined when something else answers.
 */
export async function probeSdkApi(settings: ApiSettings): Promise<string | undefined> {
  return (
    (await probeSdkService(singleAttemptApi(settings), { signal: settings.signal })) ?? undefined
  );
}

/** The newer API's version check: GET /api/v1/app/info and its updates, and the clock. */
export async function checkSdkVersionApi(settings: ApiSettings): Promise<CheckResult[]> {
  const api = singleAttemptApi(settings);
  const title = "Version API answers";
  const call = { signal: settings.signal, retry: false };
  const sent = Date.now();
  try {
    const response = await api.request("GET", "/api/v1/app/info", call);
    const clock = checkClock(response.headers.get("date"), sent, Date.now());
    const current = readSdkCurrentVersion(response);
    const updates = await api
      .request("GET", "/api/v1/app/updates", call)
      .then((answer) => `${readSdkUpdates(answer).updates.length} pending`)
      .catch((error: unknown) => `updates not read: ${describeError(error)}`);
    const sequence =
      current.releaseSequence === undefined ? "" : ` (release sequence ${current.releaseSequence})`;
    return [
      result("version", title, "pass", `${current.version}${sequence}; updates: ${updates}`, {
        details: { version: current.version },
      }),
      clock,
    ];
  } catch (error) {
    return [
      result(
        "version",
        title,
        "fail",
        `GET ${settings.baseUrl}/api/v1/app/info failed: ${describeError(error)}`,
        {
          fix: "The newer API's /healthz answers but its app info does not: check the service's logs (kubectl logs deploy/replicated).",
        },
      ),
      result("clock", "Clock agrees with the API", "skip", "no answer with a Date header"),
    ];
  }
}

/** The SDK's own HTTP layer with the doctor's settings and no retry: each check reports what one call met. */
function singleAttemptApi(settings: ApiSettings) {
  return createIntegrationApi({
    baseUrl: settings.baseUrl,
    tls: settings.tls,
    timeoutMs: settings.timeoutMs,
    retry: { limit: 0 },
  });
}
