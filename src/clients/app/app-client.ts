import { pathSegment } from "../../internal/url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { isHttpError, type PlatformApiKind } from "../integration-api/errors.ts";
import { openApiSelection } from "../sdk-api/api-client.ts";
import {
  type ApiOption,
  type Capabilities,
  capabilitiesOf,
  decidedOrThrow,
  requireCapability,
} from "../sdk-api/api-selection.ts";
import {
  decodeBody,
  type SdkEndpoint,
  sdkRequest,
  type WriteResult,
  writeResult,
} from "../sdk-api/sdk-answers.ts";
import { sdkIntegrationStatusSchema, sdkSupportBundleSchema } from "../sdk-api/sdk-schemas.ts";
import { checkMetrics, checkStrings, metricsNotSent, postOnlyOnKots } from "./app-checks.ts";
import {
  type AppHistory,
  type AppInfo,
  type AppStatus,
  type CustomMetrics,
  fromMockDataInit,
  type IntegrationMockData,
  type IntegrationMockDataInit,
  type IntegrationStatus,
  readAppHistory,
  readAppInfo,
  readAppStatus,
  readMockData,
  type SupportBundleUpload,
} from "./read-app.ts";

// The app client: the newer in-cluster API's own calls (app info, status, history, custom
// metrics, instance tags, support bundles, integration mode), its interface and its requests.
// Its records and their readers are read-app.ts; what it checks before sending, app-checks.ts.

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

/** Options of `setInstanceTags()`. */
export interface InstanceTagOptions extends CallOptions {
  /** Overwrite tags set in the Vendor Portal (default false: conflicting tags are kept). */
  force?: boolean | undefined;
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
  const selection = openApiSelection(options, true);
  const select = () => decidedOrThrow(selection, "app");
  type Rest<T> = T extends [unknown, unknown, ...infer Tail] ? Tail : never;
  const request = (...args: Rest<Parameters<typeof sdkRequest>>) =>
    sdkRequest(select().api, select().kind, ...args);
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
      return readAppInfo(await get("/api/v1/app/info", endpoints.info, call));
    },

    async status(call = {}) {
      requireCapability(select().kind, "appStatus", endpoints.status.operation);
      return readAppStatus(await get("/api/v1/app/status", endpoints.status, call));
    },

    async history(call = {}) {
      requireCapability(select().kind, "history", endpoints.history.operation);
      return readAppHistory(await get("/api/v1/app/history", endpoints.history, call));
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
      return readMockData(response);
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
