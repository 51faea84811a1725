import { baseUrlVariable } from "../integration-api/base-url.ts";
import { type PlatformApiKind, UnsupportedOperationError } from "../integration-api/errors.ts";

/**
 * Which of the platform's APIs a client talks to. `"integration"`: the Integration API of the
 * platform's legacy installs (PLATFORM_INTEGRATIONAPI). `"sdk"`: the newer in-cluster service
 * (`baseUrl`, else PLATFORM_SDK_API, else `http://replicated:3000`). `"kots"`: the admin
 * console's compatibility license endpoint (`baseUrl`, else `http://kotsadm:3000`; license
 * calls only). `"auto"` (the default): `"integration"` when a `baseUrl` is given or
 * PLATFORM_INTEGRATIONAPI is set at the client's first use, else `"sdk"`.
 */
export type ApiOption = PlatformApiKind | "auto";

/** The environment variable that may name the newer service's base URL. */
export const sdkBaseUrlVariable = "PLATFORM_SDK_API";
/** The newer service's default address: the chart's Service `replicated`, port 3000. */
export const sdkDefaultBaseUrl = "http://replicated:3000";
/** The admin console's default address: the Service `kotsadm`, port 3000. */
export const kotsDefaultBaseUrl = "http://kotsadm:3000";

const apis: readonly ApiOption[] = ["integration", "sdk", "kots", "auto"];

/** The API a client uses, decided once when it is created. */
export function selectApi(option: ApiOption | undefined, baseUrl: string | URL | undefined) {
  const chosen = option ?? "auto";
  if (!apis.includes(chosen)) {
    throw new TypeError(
      `The api option must be "integration", "sdk", "kots" or "auto", got ${String(option)}.`,
    );
  }
  if (chosen !== "auto") return chosen;
  const variable = readVariable(baseUrlVariable);
  return baseUrl !== undefined || (variable !== undefined && variable.trim() !== "")
    ? "integration"
    : "sdk";
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
  const variable = readVariable(sdkBaseUrlVariable);
  return variable === undefined || variable.trim() === "" ? sdkDefaultBaseUrl : variable;
}

interface RuntimeGlobals {
  process?: { env?: Record<string, string | undefined> };
  Deno?: { env?: { get(name: string): string | undefined } };
}

/** An environment variable, or undefined where the runtime has none or forbids reading it. */
function readVariable(name: string): string | undefined {
  const runtime = globalThis as RuntimeGlobals;
  try {
    return runtime.process?.env?.[name] ?? runtime.Deno?.env?.get(name);
  } catch {
    // Deno without --allow-env: the variable counts as unset; the baseUrl option still works.
    return undefined;
  }
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
  /** Fields carry signatures that `verifyLicenseField` checks. */
  signedLicenseFields: boolean;
  /** `app.setCustomMetrics()`, `updateCustomMetrics()`, `deleteCustomMetric()`. */
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
  kots: Object.freeze({ ...none, license: true, licenseField: true }),
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

/**
 * The API for a client, chosen at its first use rather than at its creation: a client created
 * at import time, before a test or a start-up script sets PLATFORM_INTEGRATIONAPI, still finds
 * it (as the Integration API clients always did). An explicit `api` is checked at once.
 */
export function lazyApiSelection<T>(
  option: ApiOption | undefined,
  baseUrl: string | URL | undefined,
  build: (kind: PlatformApiKind) => T,
): () => { kind: PlatformApiKind; built: T } {
  if (option !== undefined) selectApi(option, baseUrl);
  let chosen: { kind: PlatformApiKind; built: T } | undefined;
  return () => {
    if (chosen === undefined) {
      const kind = selectApi(option, baseUrl);
      chosen = { kind, built: build(kind) };
    }
    return chosen;
  };
}
