import { baseUrlVariable } from "../integration-api/base-url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { isVariableSet, readVariable } from "../integration-api/environment.ts";
import {
  isHttpError,
  type PlatformApiKind,
  UnsupportedOperationError,
} from "../integration-api/errors.ts";
import {
  createIntegrationApi,
  type IntegrationApi,
  type RequestOptions,
} from "../integration-api/http.ts";
import { isRetryableStatus } from "../integration-api/retry-policy.ts";

/**
 * Which of the platform's APIs a client talks to. `"integration"`: the Integration API of the
 * platform's legacy installs (PLATFORM_INTEGRATIONAPI). `"sdk"`: the newer in-cluster service
 * (`baseUrl`, else PLATFORM_SDK_API, else `http://replicated:3000`). `"kots"`: the admin
 * console (`baseUrl`, else `http://kotsadm:3000`): its compatibility license endpoint and, on KOTS
 * 1.102.0 and later, `app.setCustomMetrics()`. `"auto"` (the default), decided once, at the client's first use: with a
 * `baseUrl`, by what answers there (the newer service's `GET /healthz` names its version; a 2xx
 * without one or a 404 means the Integration API; no answer, 408, 429 or a 5xx decide nothing
 * and fail that call), logged at info level; without one,
 * `"integration"` when PLATFORM_INTEGRATIONAPI is set, else `"sdk"`. The app client, which only
 * the newer service serves, reads `"auto"` as `"sdk"` wherever it is pointed.
 *
 * "auto" lets the address choose, so code that checks license signatures pins `"sdk"`: under
 * "auto", a tampered service (or a PLATFORM_INTEGRATIONAPI set in the pod) can choose the
 * Integration API, which signs nothing (README: "What a signature proves").
 */
export type ApiOption = PlatformApiKind | "auto";

/** The environment variable that may name the newer service's base URL. */
export const sdkBaseUrlVariable = "PLATFORM_SDK_API";
/** The newer service's default address: the chart's Service `replicated`, port 3000. */
export const sdkDefaultBaseUrl = "http://replicated:3000";
/** The admin console's default address: the Service `kotsadm`, port 3000. */
export const kotsDefaultBaseUrl = "http://kotsadm:3000";

const apis: readonly ApiOption[] = ["integration", "sdk", "kots", "auto"];

/**
 * The API a client uses when no probe is needed, or undefined when "auto" has a `baseUrl` (what
 * answers there decides: {@link createApiSelection}). `"auto"` means `"sdk"` for a client that
 * only the newer service serves (`sdkOnly`).
 */
export function selectApi(
  option: ApiOption | undefined,
  baseUrl: string | URL | undefined,
  sdkOnly = false,
): PlatformApiKind | undefined {
  const chosen = option ?? "auto";
  if (!apis.includes(chosen)) {
    throw new TypeError(
      `The api option must be "integration", "sdk", "kots" or "auto", got ${String(option)}.`,
    );
  }
  if (chosen !== "auto") return chosen;
  if (sdkOnly) return "sdk";
  if (baseUrl !== undefined) return undefined;
  return isVariableSet(baseUrlVariable) ? "integration" : "sdk";
}

/**
 * Whether neither PLATFORM_INTEGRATIONAPI nor PLATFORM_SDK_API is set: "auto" then tries the
 * newer service's default address, and a failure must name both variables.
 */
function neitherVariableSet(): boolean {
  return !isVariableSet(baseUrlVariable) && !isVariableSet(sdkBaseUrlVariable);
}

/**
 * What the body of a `GET /healthz` says: the newer service answers `{"version":"1.19.1"}`, so
 * any JSON object with a string `version` is that service (undefined: something else answered).
 * The version is kept only when it reads as one (a bounded token such as `1.19.1`,
 * `v1.20.0-beta.1+abc`): the text comes from the address, and goes into logs and
 * `serviceVersion()`, so a long or multi-line one is dropped. The one rule by which the clients'
 * "auto" and `doctor` tell the newer service from anything else at an address.
 */
export function readHealthz(body: string): { version: string | undefined } | undefined {
  try {
    const parsed = JSON.parse(body) as { version?: unknown } | null;
    if (typeof parsed !== "object" || parsed === null || typeof parsed.version !== "string") {
      return undefined;
    }
    return { version: versionPattern.test(parsed.version) ? parsed.version : undefined };
  } catch {
    return undefined;
  }
}

// Semver-ish and bounded: a version, never a sentence or a log line.
const versionPattern = /^v?\d{1,9}(?:\.\d{1,9}){0,3}(?:[-+][0-9A-Za-z.+-]{1,64})?$/;

/**
 * What asking `GET /healthz` at an address found: the newer service (with its version when
 * readable), something else that answered for sure (a 2xx without a version, or a status
 * retrying cannot change: the Integration API's 404), or nothing decisive (no answer, a time-out,
 * 408, 429, a 5xx: a proxy or a pod still starting), with the failure.
 */
type HealthzAnswer =
  | { kind: "sdk"; version: string | undefined }
  | { kind: "other" }
  | { kind: "undecided"; error: unknown };

async function askHealthz(api: IntegrationApi, call: RequestOptions): Promise<HealthzAnswer> {
  try {
    const response = await api.request("GET", "/healthz", call);
    const found = readHealthz(response.body);
    return found === undefined ? { kind: "other" } : { kind: "sdk", version: found.version };
  } catch (error) {
    if (call.signal?.aborted) throw call.signal.reason;
    return isHttpError(error) && !error.retryable
      ? { kind: "other" }
      : { kind: "undecided", error };
  }
}

/**
 * Calls `GET /healthz` once, without retries: the newer service's version when it answers (`""`
 * when its version is unreadable), `null` when something else answers for sure (a 2xx without a
 * version, a 404), undefined when nothing decisive answers (no answer, 408, 429, a 5xx).
 */
export async function probeSdkService(
  api: IntegrationApi,
  call: CallOptions = {},
): Promise<string | null | undefined> {
  const answer = await askHealthz(api, { ...call, retry: false });
  if (answer.kind === "sdk") return answer.version ?? "";
  return answer.kind === "other" ? null : undefined;
}

/** The API a client talks to, once chosen, with the HTTP layer for it. */
export interface ChosenApi {
  kind: PlatformApiKind;
  api: IntegrationApi;
}

/** A client's choice of API, made once at its first use; see {@link createApiSelection}. */
export interface ApiSelection {
  /** The choice, or undefined while "auto" with a `baseUrl` has not probed yet. */
  decided(): ChosenApi | undefined;
  /**
   * The choice, probing the address first where "auto" has a `baseUrl`. The HTTP layer it
   * resolves with counts the probe against this call's `totalTimeoutMs`.
   */
  select(call?: CallOptions): Promise<ChosenApi>;
  /** The newer service's version (`GET /healthz`), once known; undefined on the other APIs. */
  serviceVersion(call?: CallOptions): Promise<string | undefined>;
}

/**
 * Chooses a client's API at its first use rather than at its creation: a client created at import
 * time, before a test or a start-up script sets PLATFORM_INTEGRATIONAPI, still finds it (as the
 * Integration API clients always did). An explicit `api` is checked at once and skips the probe;
 * "auto" with a `baseUrl` asks `GET /healthz` there (a renamed service, through Helm's
 * `nameOverride` or an alias, is still the newer one) until an answer decides, and says at info
 * level what it chose.
 *
 * The probe is the call's first request: it runs under the call's `signal`, `timeoutMs`, retry
 * policy and `totalTimeoutMs` (the call that follows gets what is left of it). Only a decisive
 * answer decides: the newer service's `{"version":…}`, or a status retrying cannot change (the
 * Integration API's 404) or a 2xx without a version. No answer, a time-out, 408, 429 or a 5xx (a
 * proxy, a pod still starting) decide nothing: the call fails with that failure, naming the
 * `baseUrl` option, and the next call asks again; so each call costs at most its own time-outs,
 * as a call to an address that does not answer always does. Concurrent first calls each ask on
 * their own, each under its own signal and time-outs; the first decisive answer wins.
 */
export function createApiSelection(
  option: ApiOption | undefined,
  options: IntegrationApiOptions & { baseUrl?: string | URL | undefined },
  sdkOnly = false,
): ApiSelection {
  const { baseUrl } = options;
  if (option !== undefined) selectApi(option, baseUrl, sdkOnly);
  const build = (kind: PlatformApiKind): ChosenApi => {
    const address = baseUrlFor(kind, baseUrl);
    const defaulted = option === undefined || option === "auto";
    const source =
      kind === "sdk" && defaulted && baseUrl === undefined && neitherVariableSet()
        ? `${baseUrlVariable} (legacy installs) or ${sdkBaseUrlVariable} (the newer service: neither is set, so its default address http://replicated:3000 was tried)`
        : kind === "integration" && baseUrl !== undefined
          ? "the baseUrl option"
          : undefined;
    return { kind, api: createIntegrationApi({ ...options, baseUrl: address }, kind, source) };
  };
  let chosen: ChosenApi | undefined;
  let probedVersion: string | undefined;
  let probeApi: IntegrationApi | undefined;

  async function probe(call: CallOptions): Promise<ChosenApi> {
    probeApi ??= createIntegrationApi(options, "integration", "the baseUrl option");
    const started = performance.now();
    const answer = await askHealthz(probeApi, {
      ...call,
      retry: true,
      deadline: started + probeApi.options.totalTimeoutMs,
      transient: (status) =>
        isRetryableStatus(status)
          ? `That answer decides nothing: ${String(baseUrl)} (the baseUrl option) has not said yet whether it is the newer in-cluster SDK service (its /healthz names its version) or the Integration API; a proxy or a service still starting answers so. The next call asks again; the api option skips the question.`
          : undefined,
    });
    if (answer.kind === "undecided") throw answer.error;
    if (chosen === undefined) {
      const kind = answer.kind === "sdk" ? "sdk" : "integration";
      chosen = build(kind);
      const found = answer.kind === "sdk" ? answer.version : undefined;
      probedVersion = found;
      const named = found === undefined ? "" : ` ${found}`;
      probeApi.options.logger.info(
        kind === "sdk"
          ? `platform-integration: ${String(baseUrl)} answers as the platform's newer in-cluster SDK service${named} (its /healthz names its version): using api "sdk". Pass api: "sdk" to skip this check.`
          : `platform-integration: ${String(baseUrl)} is not the newer in-cluster SDK service (its /healthz answers without a version): using the Integration API (api "integration"). Pass api explicitly to skip this check.`,
        { api: kind, baseUrl: String(baseUrl) },
      );
    }
    return withDeadline(chosen, started + chosen.api.options.totalTimeoutMs);
  }

  const selection: ApiSelection = {
    decided() {
      if (chosen === undefined) {
        const kind = selectApi(option, baseUrl, sdkOnly);
        if (kind !== undefined) chosen = build(kind);
      }
      return chosen;
    },
    async select(call = {}) {
      return selection.decided() ?? probe(call);
    },
    async serviceVersion(call = {}) {
      const { kind, api } = await selection.select(call);
      if (kind !== "sdk") return undefined;
      if (probedVersion === undefined) {
        const response = await api.request("GET", "/healthz", { ...call, retry: true });
        probedVersion = readHealthz(response.body)?.version;
      }
      return probedVersion;
    },
  };
  return selection;
}

/** The chosen API for the one call that probed: what follows shares the probe's total time-out. */
function withDeadline(chosen: ChosenApi, deadline: number): ChosenApi {
  const { api } = chosen;
  return {
    kind: chosen.kind,
    api: {
      options: api.options,
      request: (method, path, call) => api.request(method, path, { deadline, ...call }),
    },
  };
}

/** The getters' view of an undecided choice: "auto" with a `baseUrl` is known after a call. */
export function decidedOrThrow(selection: ApiSelection, client: string): ChosenApi {
  const decided = selection.decided();
  if (decided !== undefined) return decided;
  throw new Error(
    `The ${client} client's API is decided by what answers at its baseUrl, at its first call: await ${client}.detectApi() before reading api or capabilities, or pass the api option.`,
  );
}

/**
 * The base URL to give the HTTP layer: the option, else, for the newer APIs, their variable or
 * default address. Undefined for the Integration API, whose variable the layer reads per call.
 */
export function baseUrlFor(
  api: PlatformApiKind,
  baseUrl: string | URL | undefined,
): string | URL | undefined {
  if (baseUrl !== undefined || api === "integration") return baseUrl;
  if (api === "kots") return kotsDefaultBaseUrl;
  return isVariableSet(sdkBaseUrlVariable) ? readVariable(sdkBaseUrlVariable) : sdkDefaultBaseUrl;
}

/** What the selected API can serve; a call it cannot serve rejects before any request. */
export interface Capabilities {
  /** `version.current()`. */
  currentVersion: boolean;
  /** `version.updates()` and `watchUpdates()`. */
  updates: boolean;
  /** `version.apply()`: only the Integration API installs an update. */
  apply: boolean;
  /** The Audit API. */
  audit: boolean;
  /** The Identity API (login, users). */
  identity: boolean;
  /** The Status API's start-up status. */
  startupStatus: boolean;
  /** The Console API's options. */
  consoleOptions: boolean;
  /** `license.license()`. */
  license: boolean;
  /** `license.field()`. */
  licenseField: boolean;
  /**
   * Fields carry signatures that `verifyLicenseField` checks. Never gate a signature check on
   * it: under "auto" the cluster chooses the API, so it is the verified party's answer. Pin
   * `api: "sdk"` and require `"valid"` instead.
   */
  signedLicenseFields: boolean;
  /**
   * `app.setCustomMetrics()`, `updateCustomMetrics()`, `deleteCustomMetric()`; on `"kots"` (the
   * admin console, KOTS 1.102.0 and later) `setCustomMetrics()` only.
   */
  customMetrics: boolean;
  /** `app.setInstanceTags()`. */
  instanceTags: boolean;
  /** `app.status()` and `app.info()`. */
  appStatus: boolean;
  /** `app.history()`. */
  history: boolean;
  /** `app.uploadSupportBundle()` and the support bundle metadata. */
  supportBundle: boolean;
}

export type Capability = keyof Capabilities;

const none: Capabilities = {
  currentVersion: false,
  updates: false,
  apply: false,
  audit: false,
  identity: false,
  startupStatus: false,
  consoleOptions: false,
  license: false,
  licenseField: false,
  signedLicenseFields: false,
  customMetrics: false,
  instanceTags: false,
  appStatus: false,
  history: false,
  supportBundle: false,
};

const table: Record<PlatformApiKind, Readonly<Capabilities>> = {
  integration: Object.freeze({
    ...none,
    currentVersion: true,
    updates: true,
    apply: true,
    audit: true,
    identity: true,
    startupStatus: true,
    consoleOptions: true,
    license: true,
    licenseField: true,
  }),
  sdk: Object.freeze({
    ...none,
    currentVersion: true,
    updates: true,
    license: true,
    licenseField: true,
    signedLicenseFields: true,
    customMetrics: true,
    instanceTags: true,
    appStatus: true,
    history: true,
    supportBundle: true,
  }),
  // The admin console (KOTS 1.102.0 and later) takes POST /api/v1/app/custom-metrics only.
  kots: Object.freeze({ ...none, license: true, licenseField: true, customMetrics: true }),
};

/** What `api` can serve (a frozen object, shared). */
export function capabilitiesOf(api: PlatformApiKind): Readonly<Capabilities> {
  return table[api];
}

const newerOnly = 'Only the newer in-cluster SDK service serves it: use api: "sdk" there.';
const alternatives: Record<Capability, string> = {
  currentVersion: 'Use api: "sdk" (the in-cluster SDK service) or "integration".',
  updates: 'Use api: "sdk" (the in-cluster SDK service) or "integration".',
  apply:
    "The newer install methods upgrade through the admin console or `helm upgrade`; updates() still lists what is pending.",
  audit:
    "Audit events need a sink of the application's own there (its log, database or SIEM): the newer API has no audit log.",
  identity:
    "Authenticate users against the directory or identity provider directly: the newer API has no identity service.",
  startupStatus:
    "The newer API computes the application's status from its Kubernetes resources: read it with createAppClient().status().",
  consoleOptions:
    "Pass the value through the application's own configuration (its Helm values) instead.",
  license: 'Use api: "sdk" (the in-cluster SDK service) or "integration".',
  licenseField: 'Use api: "sdk" (the in-cluster SDK service) or "integration".',
  signedLicenseFields: newerOnly,
  customMetrics: newerOnly,
  instanceTags: newerOnly,
  appStatus: newerOnly,
  history: newerOnly,
  supportBundle: newerOnly,
};

/** Rejects a call that `api` cannot serve, before any request. */
export function requireCapability(api: PlatformApiKind, capability: Capability, operation: string) {
  if (table[api][capability]) return;
  throw new UnsupportedOperationError({ api, operation, alternative: alternatives[capability] });
}
