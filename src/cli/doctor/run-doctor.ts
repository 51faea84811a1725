// The doctor's order of checks and what each failure skips; the base URL read as the clients read it.
import { baseUrlVariable } from "../../clients/integration-api/base-url.ts";
import type { TlsOptions } from "../../clients/integration-api/client-options.ts";
import { isVariableSet } from "../../clients/integration-api/environment.ts";
import { sdkBaseUrlVariable } from "../../clients/sdk-api/api-selection.ts";
import { normalizeApiBaseUrl } from "../../internal/url.ts";
import {
  type ApiSettings,
  apiResult,
  checkAuditEvent,
  checkProvisionerPing,
  checkReadRoute,
  checkSdkVersionApi,
  checkVersionApi,
  probeSdkApi,
} from "./api.ts";
import { type CheckResult, result } from "./check.ts";
import {
  checkDns,
  checkTcp,
  checkTls,
  type Endpoint,
  endpointOf,
  type TrustSettings,
} from "./network.ts";

/** What the doctor checks, from the command line. */
export interface DoctorOptions {
  /** `--base-url`; the environment variable when undefined. */
  baseUrl: string | undefined;
  env: Record<string, string | undefined>;
  trust: TrustSettings;
  provisioner: string | undefined;
  readUser: string | undefined;
  auditTestEvent: boolean;
  timeoutMs: number;
  signal: AbortSignal;
  /** Called before each check starts, with what it is about to do. */
  onProgress(step: string): void;
}

/** Every check's result, in order; `passed` when none failed (warnings allowed). */
export interface DoctorReport {
  passed: boolean;
  baseUrl: string | undefined;
  checks: CheckResult[];
}

/**
 * Checks the integration from where the application runs, in the order a request travels:
 * configuration, name, port, TLS, the Version API and the clock, then the optional checks. A
 * failed step skips the steps that depend on it, saying why, so each failure appears once.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const checks: CheckResult[] = [];
  const add = (...results: CheckResult[]) => checks.push(...results);
  const probe = { timeoutMs: options.timeoutMs, signal: options.signal };
  const interrupted = () => options.signal.aborted;

  options.onProgress("reading the platform API's URL");
  const configured = checkBaseUrl(options);
  add(configured.result);
  let reachable = false;
  let settings: ApiSettings | undefined;
  let newerApi = false;
  if (configured.url !== undefined) {
    // On a newer install (the address from PLATFORM_SDK_API) the fixes name the SDK service.
    const endpoint = endpointOf(
      new URL(configured.url),
      configured.source === sdkBaseUrlVariable
        ? "the platform's newer in-cluster SDK service"
        : "the Integration API",
    );
    reachable = await checkConnection(endpoint, options, add);
    settings = {
      ...probe,
      baseUrl: configured.url,
      tls: tlsOptionsOf(options.trust, endpoint),
      source: configured.source,
    };
  }
  const apiSkip = configured.url === undefined ? "no usable URL" : "the API is not reachable";
  if (settings !== undefined && reachable && !interrupted()) {
    options.onProgress("calling the Version API");
    const version = await checkVersionApi(settings);
    const notFound = version[0]?.status === "fail" && version[0].details?.status === 404;
    // A 404 may mean the newer in-cluster API answers here instead: say so, and check it.
    const serviceVersion = notFound ? await probeSdkApi(settings) : undefined;
    if (serviceVersion === undefined) {
      add(...version);
      if (version[0]?.status === "pass") add(apiResult("integration"));
    } else {
      options.onProgress("calling the newer API");
      newerApi = true;
      add(...(await checkSdkVersionApi(settings)), apiResult("sdk", serviceVersion));
    }
  } else {
    add(skipped("version", "Version API answers", apiSkip));
    add(skipped("clock", "Clock agrees with the API", apiSkip));
  }
  if (options.auditTestEvent) {
    if (newerApi) {
      add(skipped("audit", "Audit API accepts an event", "the newer API has no audit log"));
    } else if (settings !== undefined && reachable && !interrupted()) {
      options.onProgress("writing a test audit event");
      add(await checkAuditEvent(settings));
    } else {
      add(skipped("audit", "Audit API accepts an event", apiSkip));
    }
  }
  if (options.provisioner !== undefined && !interrupted()) {
    options.onProgress(`pinging the Provisioning API at ${options.provisioner}`);
    add(await checkProvisionerPing(options.provisioner, probe));
  }
  if (options.readUser !== undefined && !interrupted()) {
    options.onProgress("calling the read route");
    add(await checkReadRoute(options.readUser, probe));
  }
  if (interrupted()) add(skipped("interrupted", "Remaining checks", "interrupted"));
  return {
    passed: checks.every((check) => check.status !== "fail") && !interrupted(),
    baseUrl: configured.url,
    checks,
  };
}

function checkBaseUrl(options: DoctorOptions): {
  result: CheckResult;
  url?: string;
  source: string;
} {
  const set = (name: string) => isVariableSet(name, options.env);
  // Legacy installs set PLATFORM_INTEGRATIONAPI; the newer service's address, when the
  // application is given one, is PLATFORM_SDK_API (the clients read the two the same way).
  const variable =
    !set(baseUrlVariable) && set(sdkBaseUrlVariable) ? sdkBaseUrlVariable : baseUrlVariable;
  const source = options.baseUrl === undefined ? variable : "--base-url";
  const title = options.baseUrl === undefined ? `${variable} is set` : "--base-url is valid";
  const raw = options.baseUrl ?? options.env[variable];
  if (raw === undefined || raw.trim() === "") {
    const fix = `Set ${baseUrlVariable} to the Integration API's URL (the platform sets it in the application's container on legacy installs), or ${sdkBaseUrlVariable} to the newer in-cluster service's (http://replicated:3000 unless renamed), or pass --base-url; outside the cluster, run "platform-integration mock-api" and use the URL it prints.`;
    return {
      result: result(
        "base-url",
        title,
        "fail",
        `neither ${baseUrlVariable} nor ${sdkBaseUrlVariable} is set`,
        { fix },
      ),
      source,
    };
  }
  try {
    // The clients' own rule (an origin, without a path), named after where the value came from.
    const url = normalizeApiBaseUrl(raw);
    return { result: result("base-url", title, "pass", url), url, source };
  } catch (error) {
    const fix = `${source} must be an absolute http(s) URL such as https://10.0.0.2:9880, without a user name or password, and without a path (the Integration API's root).`;
    return {
      result: result("base-url", title, "fail", `${source} ${(error as Error).message}`, { fix }),
      source,
    };
  }
}

/** DNS, TCP and (for https) TLS; false when a request cannot get through. */
async function checkConnection(
  endpoint: Endpoint,
  options: DoctorOptions,
  add: (...results: CheckResult[]) => void,
): Promise<boolean> {
  const probe = { timeoutMs: options.timeoutMs, signal: options.signal };
  options.onProgress(`resolving ${endpoint.host}`);
  const dns = await checkDns(endpoint, probe);
  add(dns.result);
  if (dns.address === undefined || options.signal.aborted) {
    add(skipped("tcp", "Port is reachable", "the host name does not resolve"));
    if (endpoint.https) add(skipped("tls", "TLS certificate is trusted", "no address"));
    return false;
  }
  options.onProgress(`connecting to ${dns.address}:${endpoint.port}`);
  const tcp = await checkTcp(endpoint, dns.address, probe);
  add(tcp);
  if (!endpoint.https) {
    add(result("tls", "TLS certificate is trusted", "skip", "http:// has no TLS"));
    return tcp.status === "pass";
  }
  if (tcp.status !== "pass" || options.signal.aborted) {
    add(skipped("tls", "TLS certificate is trusted", "the port is not reachable"));
    return false;
  }
  options.onProgress(`checking the TLS certificate of ${endpoint.host}:${endpoint.port}`);
  const tls = await checkTls(endpoint, dns.address, options.trust, probe);
  add(tls);
  return tls.status !== "fail";
}

function tlsOptionsOf(trust: TrustSettings, endpoint: Endpoint): TlsOptions | undefined {
  if (!endpoint.https) return undefined;
  if (trust.insecure) return { rejectUnauthorized: false };
  return trust.ca === undefined ? undefined : { ca: trust.ca.pem };
}

function skipped(id: string, title: string, because: string): CheckResult {
  return result(id, title, "skip", `skipped: ${because}`);
}
