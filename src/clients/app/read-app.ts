import type * as z from "zod/mini";
import type { ApiResponse } from "../integration-api/http.ts";
import { parseJsonBody } from "../integration-api/json-body.ts";
import type { Timestamp } from "../integration-api/timestamp.ts";
import { decodeBody, type ReadFlags, readFlags } from "../sdk-api/sdk-answers.ts";
import {
  readReleaseTime,
  type SdkMockData,
  type SdkMockRelease,
  type SdkRelease,
  sdkAppInfoSchema,
  sdkAppStatusSchema,
  sdkHistorySchema,
  sdkMockDataSchema,
  unreadTimes,
} from "../sdk-api/sdk-schemas.ts";

// The app client's records (what its calls resolve with) and the readers of the newer API's
// answers into them: the service's names mapped to the SDK's, times it sent as text that is not
// RFC 3339 kept in `extra`, integration mode's mock data both ways.

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

/** GET /api/v1/app/info. */
export function readAppInfo(response: ApiResponse): AppInfo {
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
    ...readFlags(response.headers),
  };
}

/** GET /api/v1/app/status. */
export function readAppStatus(response: ApiResponse): AppStatus {
  const { appStatus } = decodeBody(response, sdkAppStatusSchema);
  const wire = (parseJsonBody(response) as { appStatus?: unknown }).appStatus;
  const unread = unreadTimes(wire, ["updatedAt"]);
  return {
    appSlug: appStatus.appSlug,
    state: appStatus.state,
    resourceStates: appStatus.resourceStates ?? [],
    ...(appStatus.updatedAt === undefined ? {} : { updatedAt: appStatus.updatedAt }),
    sequence: appStatus.sequence,
    ...(unread === undefined ? {} : { extra: unread }),
    ...readFlags(response.headers),
  };
}

/** GET /api/v1/app/history. */
export function readAppHistory(response: ApiResponse): AppHistory {
  const { releases } = decodeBody(response, sdkHistorySchema);
  const wire = (parseJsonBody(response) as { releases?: unknown }).releases;
  const raw = Array.isArray(wire) ? wire : [];
  return {
    releases: (releases ?? []).map((release, index) => toRelease(release, raw[index])),
    ...readFlags(response.headers),
  };
}

/** GET /api/v1/integration/mock-data. */
export function readMockData(response: ApiResponse): IntegrationMockData {
  return toMockData(decodeBody(response, sdkMockDataSchema));
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
export function fromMockDataInit(init: IntegrationMockDataInit): z.input<typeof sdkMockDataSchema> {
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
