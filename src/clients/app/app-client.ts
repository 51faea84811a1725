import type * as z from "zod/mini";
import { pathSegment } from "../../internal/url.ts";
import {
  type CallOptions,
  type IntegrationApiOptions,
  normalizeOptions,
} from "../integration-api/client-options.ts";
import {
  isHttpError,
  type PlatformApiKind,
  UnsupportedOperationError,
} from "../integration-api/errors.ts";
import { parseJsonBody } from "../integration-api/json-body.ts";
import type { Timestamp } from "../integration-api/timestamp.ts";
import {
  type ApiOption,
  type Capabilities,
  capabilitiesOf,
  createApiSelection,
  decidedOrThrow,
  requireCapability,
} from "../sdk-api/api-selection.ts";
import {
  decodeBody,
  type ReadFlags,
  type SdkEndpoint,
  sdkRequest,
  type WriteResult,
  writeResult,
} from "../sdk-api/sdk-answers.ts";
import {
  readReleaseTime,
  type SdkMockData,
  type SdkMockRelease,
  type SdkRelease,
  sdkAppInfoSchema,
  sdkAppStatusSchema,
  sdkHistorySchema,
  sdkIntegrationStatusSchema,
  sdkMockDataSchema,
  sdkSupportBundleSchema,
  unreadTimes,
} from "../sdk-api/sdk-schemas.ts";

/** Options of {@link createAppClient}. */
export interface AppClientOptions extends IntegrationApiOptions {
  /**
   * Which API to talk to. The newer in-cluster SDK service serves these calls, so `"auto"` (the
   * default) means `"sdk"` wherever the client is pointed: `baseUrl`, else PLATFORM_SDK_API,
   * else http://replicated:3000. On KOTS installs, `"kots"` sends `setCustomMetrics()` to the
   * admin console (`POST http://kotsadm:3000/api/v1/app/custom-metrics`, KOTS 1.102.0 and
   * later). A call the API cannot serve rejects at once with an `UnsupportedOperationError`, and
   * `capabilities` says so beforehand.
   */
  api?: ApiOption | undefined;
}

/** A release of the application (the app info's current release, an item of the history). */
export interface AppRelease {
  /** `versionLabel`. */
  version: string;
  releaseNotes: string;
  /** `createdAt`. */
  releaseDate?: Timestamp;
  /** `deployedAt`: set for Helm installs only. */
  installDate?: Timestamp;
  helmReleaseName?: string;
  helmReleaseRevision?: number;
  helmReleaseNamespace?: string;
  /**
   * `createdAt` and `deployedAt` as the text the service sent, under those names, when it is
   * not RFC 3339 (the service treats them as opaque text); the `Timestamp` is then absent.
   */
  extra?: Record<string, string>;
}

/** GET /api/v1/app/info. */
export interface AppInfo extends ReadFlags {
  instanceId: string;
  appSlug: string;
  appName: string;
  /** "ready", "updating", "degraded", "unavailable", "missing"; "" before the first status. */
  appStatus: string;
  /** `oci://registry…/app/channel/chart`, when known. */
  helmChartUrl?: string;
  currentRelease: AppRelease;
  channelId: string;
  channelName: string;
  /** Absent when the registry did not inject it. */
  channelSequence?: number;
  /** Absent when the registry did not inject it. */
  releaseSequence?: number;
}

/** One Kubernetes resource the application's status is computed from. */
export interface ResourceState {
  kind: string;
  name: string;
  namespace: string;
  state: string;
}

/** GET /api/v1/app/status: the status the platform computes from the app's Kubernetes resources. */
export interface AppStatus extends ReadFlags {
  appSlug: string;
  /** "ready", "updating", "degraded", "unavailable", "missing". */
  state: string;
  resourceStates: ResourceState[];
  updatedAt?: Timestamp;
  sequence: number;
  /** `updatedAt` as the text the service sent, when it is not RFC 3339 (then no `updatedAt`). */
  extra?: Record<string, string>;
}

/** GET /api/v1/app/history: the releases deployed, newest Helm revision first. */
export interface AppHistory extends ReadFlags {
  releases: AppRelease[];
}

/** Custom metrics: names to numbers, strings or booleans (the service refuses anything else). */
export type CustomMetrics = Record<string, string | number | boolean>;

/** Options of `setInstanceTags()`. */
export interface InstanceTagOptions extends CallOptions {
  /** Overwrite tags set in the Vendor Portal (default false: conflicting tags are kept). */
  force?: boolean | undefined;
}

/** What a support bundle upload resolves to. */
export interface SupportBundleUpload {
  bundleId: string;
  slug: string;
}

/** GET /api/v1/integration/status. */
export interface IntegrationStatus {
  /**
   * Integration mode is on: a development license with integration enabled, so app info,
   * status, updates and history serve the mock data. False for any other license (the service
   * answers 403 to them).
   */
  enabled: boolean;
}

/** A release of integration mode's mock data: a release with its channel and sequences. */
export interface MockRelease extends AppRelease {
  channelId: string;
  channelName: string;
  channelSequence: number;
  releaseSequence: number;
}

/** v2 mock data's status: what `status()` then serves. */
export interface MockAppStatus {
  appSlug: string;
  state: string;
  resourceStates: ResourceState[];
  /** Absent when the data gives none (the service then serves Go's zero time). */
  updatedAt?: Timestamp;
  sequence: number;
}

/**
 * Integration mode's mock data (GET /api/v1/integration/mock-data). `v1` has a status string
 * and `status()` fails (500); `v2` a status object.
 */
export interface IntegrationMockData {
  version: "v1" | "v2";
  appStatus: string | MockAppStatus;
  helmChartUrl?: string;
  currentRelease?: MockRelease;
  /** As given: the service serves them in this order from `history()`. */
  deployedReleases: MockRelease[];
  /** What `updates()` serves, in this order. */
  availableReleases: MockRelease[];
}

/** A release to put in the mock data: only `version` is required. */
export interface MockReleaseInit {
  version: string;
  releaseNotes?: string;
  releaseDate?: Date | string;
  installDate?: Date | string;
  helmReleaseName?: string;
  helmReleaseRevision?: number;
  helmReleaseNamespace?: string;
  channelId?: string;
  channelName?: string;
  channelSequence?: number;
  releaseSequence?: number;
}

/** What `setMockData()` takes: v2 unless `version` says v1, which needs a status string. */
export interface IntegrationMockDataInit {
  version?: "v1" | "v2";
  appStatus?:
    | string
    | {
        state: string;
        resourceStates?: ResourceState[];
        updatedAt?: Date | string;
        sequence?: number;
        appSlug?: string;
      };
  helmChartUrl?: string;
  currentRelease?: MockReleaseInit;
  deployedReleases?: MockReleaseInit[];
  availableReleases?: MockReleaseInit[];
}

/** The newer in-cluster API's own calls, which have no Integration API twin. */
export interface AppClient {
  /** The API this client talks to, decided at its first use (or by the `api` option). */
  readonly api: PlatformApiKind;
  /** What that API can serve: everything here needs `"sdk"`. */
  readonly capabilities: Readonly<Capabilities>;
  /**
   * The service's version, from its `GET /healthz` (`"1.19.1"`), to gate features an older
   * service lacks (support bundles need 1.17.0, their metadata 1.18.0); undefined on the other
   * APIs.
   */
  serviceVersion(options?: CallOptions): Promise<string | undefined>;
  /** The app info: instance, channel, current release and status. */
  info(options?: CallOptions): Promise<AppInfo>;
  /** The app's status, computed by the platform from its Kubernetes resources. */
  status(options?: CallOptions): Promise<AppStatus>;
  /** The releases deployed, newest first (Helm installs only: otherwise an `HttpError` 400). */
  history(options?: CallOptions): Promise<AppHistory>;
  /**
   * Replaces the custom metrics with `data` (POST). An identical call within 60 seconds is
   * answered from the service's replay cache: `replayed` says so (see {@link WriteResult}).
   *
   * In read-only mode (the service's Helm value `readOnlyMode`) the service takes the call
   * without a 422: it stores nothing, still sends `data` upstream (in an air gap, drops it) and
   * answers 200, so a later `updateCustomMetrics()` merges with nothing.
   *
   * A 400 with an empty body means the service could not pass the metrics on: its send to the
   * vendor failed (most often its uplink, which passes; also the vendor's own refusal, such as a
   * revoked license, which does not), or in an air gap its report could not be written. Retried
   * like a 5xx (then an `HttpError` whose `retryable` is true and whose message says exactly
   * that); whether the service kept its own copy is not known (the admin console keeps none).
   *
   * @throws TypeError before any request when `data` is empty or holds a value that is not a
   * string, a finite number or a boolean.
   */
  setCustomMetrics(data: CustomMetrics, options?: CallOptions): Promise<WriteResult>;
  /**
   * Merges `data` into the last custom metrics (PATCH); otherwise as `setCustomMetrics()`,
   * read-only mode included (nothing stored, so nothing to merge with).
   */
  updateCustomMetrics(data: CustomMetrics, options?: CallOptions): Promise<WriteResult>;
  /**
   * Removes one custom metric (DELETE).
   *
   * @throws ReadOnlyModeError (not retried) when the service runs in read-only mode (422).
   */
  deleteCustomMetric(key: string, options?: CallOptions): Promise<WriteResult>;
  /**
   * Sets the instance's tags (the tag `name` names the instance; `""` removes a tag). With
   * `force: false` (the default) tags set in the Vendor Portal win.
   *
   * @throws TypeError before any request when a tag's value is not a string.
   * @throws ReadOnlyModeError (not retried) when the service runs in read-only mode (422).
   */
  setInstanceTags(tags: Record<string, string>, options?: InstanceTagOptions): Promise<WriteResult>;
  /**
   * Uploads a support bundle (a .tar.gz) to the vendor, with a Content-Length as the service
   * requires. Never retried (a retry would upload it twice). Unavailable in an air gap (400) and
   * before service 1.17.0 (an `UnsupportedOperationError` that names the version).
   */
  uploadSupportBundle(
    bundle: Blob | Uint8Array<ArrayBuffer> | ArrayBuffer,
    options?: CallOptions,
  ): Promise<SupportBundleUpload>;
  /**
   * Replaces the support bundle metadata (string values; service 1.18.0 and later).
   *
   * @throws ReadOnlyModeError (not retried) when the service runs in read-only mode (422).
   */
  setSupportBundleMetadata(
    data: Record<string, string>,
    options?: CallOptions,
  ): Promise<WriteResult>;
  /** Merges into the support bundle metadata; read-only mode as `setSupportBundleMetadata()`. */
  updateSupportBundleMetadata(
    data: Record<string, string>,
    options?: CallOptions,
  ): Promise<WriteResult>;
  /**
   * Whether integration mode is on (for tests against a development license): app info,
   * status, updates and history then serve the mock data, marked `mockData`.
   */
  integrationStatus(options?: CallOptions): Promise<IntegrationStatus>;
  /**
   * Integration mode's mock data (the service's default set until `setMockData()` replaces it).
   *
   * @throws HttpError 403 when integration mode is off or the license is not a development one.
   */
  mockData(options?: CallOptions): Promise<IntegrationMockData>;
  /**
   * Replaces integration mode's mock data (POST; the service answers 201).
   *
   * @throws HttpError 403 when integration mode is off or the license is not a development
   * one; 400 when the service cannot decode the data.
   * @throws ReadOnlyModeError in read-only mode.
   */
  setMockData(data: IntegrationMockDataInit, options?: CallOptions): Promise<void>;
}

const endpoints = {
  info: { operation: "app.info", feature: "the app info" },
  status: { operation: "app.status", feature: "the app status" },
  history: { operation: "app.history", feature: "the release history" },
  metrics: { operation: "app.setCustomMetrics", feature: "custom metrics" },
  tags: { operation: "app.setInstanceTags", feature: "instance tags" },
  upload: {
    operation: "app.uploadSupportBundle",
    feature: "support bundle upload",
    since: "1.17.0",
  },
  metadata: {
    operation: "app.setSupportBundleMetadata",
    feature: "support bundle metadata",
    since: "1.18.0",
  },
  integration: { operation: "app.integrationStatus", feature: "integration mode" },
  mockData: { operation: "app.mockData", feature: "integration mode's mock data" },
} satisfies Record<string, SdkEndpoint>;

/**
 * Creates a client of the newer in-cluster API's own calls (app info, status and history, custom
 * metrics, instance tags, support bundles), with the TLS, time-out, retry and error behaviour of
 * the other clients. Its answers say when they are stale (`fromCache`) or integration-mode data
 * (`mockData`); a write the service replays from its 60-second cache says so (`replayed`).
 *
 * @example
 * ```ts
 * import { createAppClient } from "platform-integration/app";
 *
 * const app = createAppClient();
 * if (app.capabilities.customMetrics) {
 *   await app.setCustomMetrics({ activeUsers: 42, plan: "enterprise" });
 * }
 * const { state } = await app.status();
 * ```
 */
export function createAppClient(options: AppClientOptions = {}): AppClient {
  const { api: option, ...rest } = options;
  normalizeOptions(rest);
  const selection = createApiSelection(option, rest, true);
  const select = () => decidedOrThrow(selection, "app");
  type Rest<T> = T extends [unknown, unknown, ...infer Tail] ? Tail : never;
  const request = (...args: Rest<Parameters<typeof sdkRequest>>) =>
    sdkRequest(select().api, select().kind, ...args);
  const flags = (headers: Headers): ReadFlags => ({
    fromCache: headers.get("x-replicated-served-from-cache") === "true",
    mockData: headers.get("x-replicated-mock-data") === "true",
  });
  const get = async (path: string, endpoint: SdkEndpoint, call: CallOptions) =>
    request("GET", path, endpoint, {
      ...call,
      retry: true,
    });
  const send = async (
    method: "POST" | "PATCH" | "DELETE",
    path: string,
    endpoint: SdkEndpoint,
    body: unknown,
    call: CallOptions,
  ) =>
    writeResult(
      await request(method, path, endpoint, {
        ...call,
        ...(body === undefined ? {} : { json: JSON.stringify(body) }),
        // The service replays an identical write from its cache, so sending it again is safe.
        retry: true,
        ...(endpoint === endpoints.metrics ? { transient: metricsNotSent } : {}),
      }),
    );

  return {
    get api() {
      return select().kind;
    },
    get capabilities() {
      return capabilitiesOf(select().kind);
    },
    serviceVersion: (call) => selection.serviceVersion(call),

    async info(call = {}) {
      requireCapability(select().kind, "appStatus", endpoints.info.operation);
      const response = await get("/api/v1/app/info", endpoints.info, call);
      const info = decodeBody(response, sdkAppInfoSchema);
      return {
        instanceId: info.instanceID,
        appSlug: info.appSlug,
        appName: info.appName,
        appStatus: info.appStatus,
        ...(info.helmChartURL === undefined ? {} : { helmChartUrl: info.helmChartURL }),
        currentRelease: toRelease(
          info.currentRelease,
          (parseJsonBody(response) as { currentRelease?: unknown }).currentRelease,
        ),
        channelId: info.channelID,
        channelName: info.channelName,
        ...(info.channelSequence === undefined ? {} : { channelSequence: info.channelSequence }),
        ...(info.releaseSequence === undefined ? {} : { releaseSequence: info.releaseSequence }),
        ...flags(response.headers),
      };
    },

    async status(call = {}) {
      requireCapability(select().kind, "appStatus", endpoints.status.operation);
      const response = await get("/api/v1/app/status", endpoints.status, call);
      const { appStatus } = decodeBody(response, sdkAppStatusSchema);
      const unread = unreadTimes((parseJsonBody(response) as { appStatus?: unknown }).appStatus, [
        "updatedAt",
      ]);
      return {
        appSlug: appStatus.appSlug,
        state: appStatus.state,
        resourceStates: appStatus.resourceStates ?? [],
        ...(appStatus.updatedAt === undefined ? {} : { updatedAt: appStatus.updatedAt }),
        sequence: appStatus.sequence,
        ...(unread === undefined ? {} : { extra: unread }),
        ...flags(response.headers),
      };
    },

    async history(call = {}) {
      requireCapability(select().kind, "history", endpoints.history.operation);
      const response = await get("/api/v1/app/history", endpoints.history, call);
      const { releases } = decodeBody(response, sdkHistorySchema);
      const wire = (parseJsonBody(response) as { releases?: unknown }).releases;
      const raw = Array.isArray(wire) ? wire : [];
      return {
        releases: (releases ?? []).map((release, index) => toRelease(release, raw[index])),
        ...flags(response.headers),
      };
    },

    async setCustomMetrics(data, call = {}) {
      requireCapability(select().kind, "customMetrics", "app.setCustomMetrics");
      const body = { data: checkMetrics(data, "setCustomMetrics") };
      return send("POST", "/api/v1/app/custom-metrics", endpoints.metrics, body, call);
    },

    async updateCustomMetrics(data, call = {}) {
      requireCapability(select().kind, "customMetrics", "app.updateCustomMetrics");
      postOnlyOnKots(select().kind, "app.updateCustomMetrics");
      const body = { data: checkMetrics(data, "updateCustomMetrics") };
      return send("PATCH", "/api/v1/app/custom-metrics", endpoints.metrics, body, call);
    },

    async deleteCustomMetric(key, call = {}) {
      requireCapability(select().kind, "customMetrics", "app.deleteCustomMetric");
      postOnlyOnKots(select().kind, "app.deleteCustomMetric");
      const path = `/api/v1/app/custom-metrics/${pathSegment("key", key)}`;
      return send("DELETE", path, endpoints.metrics, undefined, call);
    },

    async setInstanceTags(tags, { force, ...call } = {}) {
      requireCapability(select().kind, "instanceTags", endpoints.tags.operation);
      const checked = checkStrings(tags, "setInstanceTags", "tag");
      const body = { data: { force: force === true, tags: checked } };
      return send("POST", "/api/v1/app/instance-tags", endpoints.tags, body, call);
    },

    async uploadSupportBundle(bundle, call = {}) {
      requireCapability(select().kind, "supportBundle", endpoints.upload.operation);
      const data =
        bundle instanceof Blob
          ? bundle
          : bundle instanceof ArrayBuffer
            ? new Uint8Array(bundle)
            : bundle instanceof Uint8Array
              ? bundle
              : undefined;
      if (data === undefined) {
        throw new TypeError(
          "uploadSupportBundle() takes the bundle's bytes: a Blob, a Uint8Array or an ArrayBuffer (a stream has no Content-Length, which the service requires).",
        );
      }
      const response = await request("POST", "/api/v1/supportbundle", endpoints.upload, {
        ...call,
        bytes: { data, contentType: "application/gzip" },
        retry: false,
      });
      return decodeBody(response, sdkSupportBundleSchema);
    },

    async setSupportBundleMetadata(data, call = {}) {
      requireCapability(select().kind, "supportBundle", endpoints.metadata.operation);
      const body = { data: checkStrings(data, "setSupportBundleMetadata", "metadata") };
      return send("POST", "/api/v1/supportbundle/metadata", endpoints.metadata, body, call);
    },

    async updateSupportBundleMetadata(data, call = {}) {
      requireCapability(select().kind, "supportBundle", "app.updateSupportBundleMetadata");
      const body = { data: checkStrings(data, "updateSupportBundleMetadata", "metadata") };
      return send("PATCH", "/api/v1/supportbundle/metadata", endpoints.metadata, body, call);
    },

    async integrationStatus(call = {}) {
      requireCapability(select().kind, "appStatus", endpoints.integration.operation);
      try {
        const response = await get("/api/v1/integration/status", endpoints.integration, call);
        return { enabled: decodeBody(response, sdkIntegrationStatusSchema).isEnabled };
      } catch (error) {
        // The service's answer to any license that is not a development one.
        if (isHttpError(error) && error.status === 403) return { enabled: false };
        throw error;
      }
    },

    async mockData(call = {}) {
      requireCapability(select().kind, "appStatus", endpoints.mockData.operation);
      const response = await get("/api/v1/integration/mock-data", endpoints.mockData, call);
      return toMockData(decodeBody(response, sdkMockDataSchema));
    },

    async setMockData(data, call = {}) {
      requireCapability(select().kind, "appStatus", "app.setMockData");
      await request("POST", "/api/v1/integration/mock-data", endpoints.mockData, {
        ...call,
        json: JSON.stringify(fromMockDataInit(data)),
        // It replaces the whole set: sending it again is safe.
        retry: true,
      });
    },
  };
}

function toMockData(data: SdkMockData): IntegrationMockData {
  const release = (item: SdkMockRelease): MockRelease => ({
    // A Release with the mock data's zero values as absent, as the app endpoints serve it.
    ...toRelease(
      {
        versionLabel: item.versionLabel,
        releaseNotes: item.releaseNotes,
        createdAt: readReleaseTime(item.createdAt),
        deployedAt: readReleaseTime(item.deployedAt),
        helmReleaseName: item.helmReleaseName || undefined,
        helmReleaseRevision: item.helmReleaseRevision || undefined,
        helmReleaseNamespace: item.helmReleaseNamespace || undefined,
      },
      // Text that is no time is kept in `extra`, as the app endpoints' readers keep it.
      { createdAt: item.createdAt, deployedAt: item.deployedAt },
    ),
    channelId: item.channelID,
    channelName: item.channelName,
    channelSequence: item.channelSequence,
    releaseSequence: item.releaseSequence,
  });
  const list = (items: SdkMockRelease[] | null | undefined) => (items ?? []).map(release);
  const { appStatus } = data;
  let status: IntegrationMockData["appStatus"] = "";
  if (typeof appStatus === "string") status = appStatus;
  else if (appStatus !== undefined) {
    const updatedAt = readReleaseTime(appStatus.updatedAt);
    status = {
      appSlug: appStatus.appSlug,
      state: appStatus.state,
      resourceStates: appStatus.resourceStates ?? [],
      ...(updatedAt === undefined ? {} : { updatedAt }),
      sequence: appStatus.sequence,
    };
  }
  return {
    version: data.version ?? "v1",
    appStatus: status,
    ...(data.helmChartURL ? { helmChartUrl: data.helmChartURL } : {}),
    ...(data.currentRelease === undefined ? {} : { currentRelease: release(data.currentRelease) }),
    deployedReleases: list(data.deployedReleases),
    availableReleases: list(data.availableReleases),
  };
}

/** The wire form of the mock data: the service's names, dates as RFC 3339 text. */
function fromMockDataInit(init: IntegrationMockDataInit): z.input<typeof sdkMockDataSchema> {
  const version = init.version ?? "v2";
  const { appStatus } = init;
  if (version === "v1" ? typeof appStatus === "object" : typeof appStatus === "string") {
    throw new TypeError(
      `setMockData(): ${version} mock data takes appStatus as ${version === "v1" ? "a state string" : "an object with a state"}.`,
    );
  }
  const date = (value: Date | string | undefined) =>
    value === undefined ? "" : typeof value === "string" ? value : value.toISOString();
  const release = (item: MockReleaseInit) => ({
    versionLabel: item.version,
    releaseNotes: item.releaseNotes ?? "",
    createdAt: date(item.releaseDate),
    deployedAt: date(item.installDate),
    helmReleaseName: item.helmReleaseName ?? "",
    helmReleaseRevision: item.helmReleaseRevision ?? 0,
    helmReleaseNamespace: item.helmReleaseNamespace ?? "",
    channelID: item.channelId ?? "",
    channelName: item.channelName ?? "",
    channelSequence: item.channelSequence ?? 0,
    releaseSequence: item.releaseSequence ?? 0,
  });
  return {
    version,
    ...(appStatus === undefined
      ? {}
      : typeof appStatus === "string"
        ? { appStatus }
        : {
            appStatus: {
              appSlug: appStatus.appSlug ?? "",
              resourceStates: appStatus.resourceStates ?? [],
              // Go's zero time: the service's own for a status without one.
              updatedAt:
                appStatus.updatedAt === undefined
                  ? "0001-01-01T00:00:00Z"
                  : date(appStatus.updatedAt),
              state: appStatus.state,
              sequence: appStatus.sequence ?? 0,
            },
          }),
    ...(init.helmChartUrl === undefined ? {} : { helmChartURL: init.helmChartUrl }),
    ...(init.currentRelease === undefined ? {} : { currentRelease: release(init.currentRelease) }),
    ...(init.deployedReleases === undefined
      ? {}
      : { deployedReleases: init.deployedReleases.map(release) }),
    ...(init.availableReleases === undefined
      ? {}
      : { availableReleases: init.availableReleases.map(release) }),
  };
}

/** The admin console takes custom metrics by POST only: the whole set each time. */
function postOnlyOnKots(kind: PlatformApiKind, operation: string): void {
  if (kind !== "kots") return;
  throw new UnsupportedOperationError({
    api: kind,
    operation,
    alternative:
      "The admin console takes custom metrics by POST only: send the whole set with setCustomMetrics().",
  });
}

/**
 * The custom-metrics endpoints answer 400 with an empty body when the metrics could not be
 * passed on (their other 400s carry a message): in the service's source, a failed send to the
 * vendor (usually its uplink, which passes; possibly the vendor's refusal, which does not) or
 * an air-gap report that could not be written. Mostly transient, so retried like a 5xx; the
 * message says only what is known.
 */
function metricsNotSent(status: number, body: string): string | undefined {
  if (status !== 400 || body.trim() !== "") return undefined;
  return "The custom metrics could not be passed on (a 400 with an empty body): in the platform's SDK service that means its send to the vendor failed (most often its uplink, which passes; possibly the vendor refusing them, as for a revoked license, which does not), or in an air gap that its report could not be written. Retried under the client's retry settings; if it persists, read the service's log. Whether it kept its own copy is not known, so the next successful call sends the whole set again.";
}

function toRelease(release: SdkRelease, wire: unknown): AppRelease {
  const unread = unreadTimes(wire, ["createdAt", "deployedAt"]);
  return {
    version: release.versionLabel,
    releaseNotes: release.releaseNotes,
    ...(release.createdAt === undefined ? {} : { releaseDate: release.createdAt }),
    ...(release.deployedAt === undefined ? {} : { installDate: release.deployedAt }),
    ...(release.helmReleaseName === undefined ? {} : { helmReleaseName: release.helmReleaseName }),
    ...(release.helmReleaseRevision === undefined
      ? {}
      : { helmReleaseRevision: release.helmReleaseRevision }),
    ...(release.helmReleaseNamespace === undefined
      ? {}
      : { helmReleaseNamespace: release.helmReleaseNamespace }),
    ...(unread === undefined ? {} : { extra: unread }),
  };
}

function plainEntries(data: unknown, method: string): [string, unknown][] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(`${method}() takes an object of names to values.`);
  }
  return Object.entries(data);
}

/** The service refuses empty data and null, array or object values: say so before sending. */
function checkMetrics(data: CustomMetrics, method: string): CustomMetrics {
  const entries = plainEntries(data, method);
  if (entries.length === 0) throw new TypeError(`${method}() needs at least one metric.`);
  for (const [name, value] of entries) {
    const scalar =
      typeof value === "string" ||
      typeof value === "boolean" ||
      (typeof value === "number" && Number.isFinite(value));
    if (!scalar) {
      throw new TypeError(
        `${method}(): the metric ${JSON.stringify(name)} must be a string, a finite number or a boolean, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.`,
      );
    }
  }
  return Object.fromEntries(entries) as CustomMetrics;
}

function checkStrings(
  data: Record<string, string>,
  method: string,
  what: string,
): Record<string, string> {
  const entries = plainEntries(data, method);
  const wrong = entries.find(([, value]) => typeof value !== "string");
  if (wrong !== undefined) {
    throw new TypeError(`${method}(): the ${what} ${JSON.stringify(wrong[0])} must be a string.`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
