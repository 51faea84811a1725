import {
  encoded,
  goJson,
  integrationOn,
  type SdkFakeContext,
  type SdkFakeRoute,
  staleHeaders,
  stamp,
} from "../sdk-api/fake-answers.ts";
import {
  type SdkRelease,
  sdkAppInfoSchema,
  sdkAppStatusSchema,
  sdkHistorySchema,
  sdkUpdatesSchema,
} from "../sdk-api/sdk-schemas.ts";
import { type GoMockData, goRelease, mockHeader } from "./fake-mock-data.ts";

// The app's part of the newer API's fake: app info, status, updates and history, from the
// fake's releases, or in integration mode from the mock data (fake-mock-data.ts); each record
// encoded by the schema the clients decode it with (sdk-api/sdk-schemas.ts).

/** A release as the fake's newer API serves it (app info's `currentRelease`, history). */
export interface FakeSdkRelease {
  version: string;
  releaseNotes?: string;
  /** `createdAt`; default: the fake's clock at creation. */
  releaseDate?: string | Date;
  /** `deployedAt`; default: none (`""`), as outside Helm installs. */
  installDate?: string | Date;
  helmReleaseName?: string;
  helmReleaseRevision?: number;
  helmReleaseNamespace?: string;
}

/** A pending update: no sequence, as on the newer API. */
export interface FakeSdkUpdate {
  version: string;
  releaseNotes?: string;
  releaseDate?: string | Date;
}

/** The app's starting state, part of `FakeSdkApiOptions`. */
export interface FakeSdkAppOptions {
  /** The running release (default: version 1.0.0, release sequence 1). */
  current?: FakeSdkRelease & { releaseSequence?: number; channelSequence?: number };
  /** The app info's other fields. */
  app?: {
    instanceId?: string;
    appSlug?: string;
    appName?: string;
    channelId?: string;
    channelName?: string;
  };
  /** Pending updates, newest first (default: none). */
  updates?: readonly FakeSdkUpdate[];
  /** The release history, newest first (default: the current release). */
  history?: readonly FakeSdkRelease[];
  /** The app status (default: ready, no resources). */
  appStatus?: {
    state?: string;
    resourceStates?: { kind: string; name: string; namespace?: string; state: string }[];
  };
}

interface AppState {
  current: NonNullable<FakeSdkAppOptions["current"]>;
  updates: readonly FakeSdkUpdate[];
  history: readonly FakeSdkRelease[] | undefined;
  appStatus: NonNullable<FakeSdkAppOptions["appStatus"]>;
}

/** The app's part of the newer API's fake: its routes and the setters of its state. */
export function createFakeSdkApp(
  context: SdkFakeContext,
  options: FakeSdkAppOptions,
  mockData: () => GoMockData,
): {
  routes: SdkFakeRoute[];
  set(state: Partial<AppState>): void;
  reset(): void;
} {
  const initial = (): AppState => ({
    current: structuredClone(options.current ?? { version: "1.0.0", releaseSequence: 1 }),
    updates: structuredClone(options.updates ?? []),
    history: options.history === undefined ? undefined : structuredClone(options.history),
    appStatus: structuredClone(options.appStatus ?? {}),
  });
  let state = initial();
  const app = options.app ?? {};
  const release = (init: FakeSdkRelease): SdkRelease => ({
    versionLabel: init.version,
    releaseNotes: init.releaseNotes ?? "",
    createdAt: stamp(init.releaseDate, context.created),
    deployedAt: stamp(init.installDate),
    ...(init.helmReleaseName === undefined ? {} : { helmReleaseName: init.helmReleaseName }),
    ...(init.helmReleaseRevision === undefined
      ? {}
      : { helmReleaseRevision: init.helmReleaseRevision }),
    ...(init.helmReleaseNamespace === undefined
      ? {}
      : { helmReleaseNamespace: init.helmReleaseNamespace }),
  });
  const appSlug = () => app.appSlug ?? context.license().appSlug ?? "fake-app";
  const channelName = () => app.channelName ?? context.license().channelName ?? "Stable";

  /** App info in integration mode: v1 keeps the install's channel, v2 takes the mock release's. */
  const mockInfo = (data: GoMockData) => {
    const v2 = data.version === "v2";
    const mock = data.currentRelease;
    return {
      instanceID: app.instanceId ?? "fake-instance-id",
      appSlug: appSlug(),
      appName: app.appName ?? "Fake App",
      appStatus: typeof data.appStatus === "string" ? data.appStatus : data.appStatus.state,
      ...(data.helmChartURL === undefined ? {} : { helmChartURL: data.helmChartURL }),
      currentRelease: goRelease(mock),
      channelID: v2 ? (mock?.channelID ?? "") : (app.channelId ?? "fake-channel-id"),
      channelName: v2 ? (mock?.channelName ?? "") : channelName(),
      channelSequence: v2 ? (mock?.channelSequence ?? 0) : (state.current.channelSequence ?? -1),
      releaseSequence: v2 ? (mock?.releaseSequence ?? 0) : (state.current.releaseSequence ?? -1),
    };
  };

  const routes: SdkFakeRoute[] = [
    {
      method: "GET",
      path: "/api/v1/app/info",
      answer: () => {
        if (integrationOn(context)) return goJson(200, mockInfo(mockData()), mockHeader);
        return encoded(sdkAppInfoSchema, {
          instanceID: app.instanceId ?? "fake-instance-id",
          appSlug: appSlug(),
          appName: app.appName ?? "Fake App",
          appStatus: state.appStatus.state ?? "ready",
          currentRelease: release(state.current),
          channelID: app.channelId ?? "fake-channel-id",
          channelName: channelName(),
          channelSequence: state.current.channelSequence,
          releaseSequence: state.current.releaseSequence,
        });
      },
    },
    {
      method: "GET",
      path: "/api/v1/app/status",
      answer: () => {
        if (integrationOn(context)) {
          const data = mockData();
          // v1 mock data has no status object: the service fails the call.
          if (typeof data.appStatus === "string") return new Response(null, { status: 500 });
          return goJson(200, { appStatus: data.appStatus }, mockHeader);
        }
        return encoded(sdkAppStatusSchema, {
          appStatus: {
            appSlug: context.license().appSlug ?? "fake-app",
            resourceStates: (state.appStatus.resourceStates ?? []).map((resource) => ({
              ...resource,
              namespace: resource.namespace ?? "default",
            })),
            updatedAt: stamp(undefined, context.now()),
            state: state.appStatus.state ?? "ready",
            sequence: state.current.releaseSequence ?? 1,
          },
        });
      },
    },
    {
      method: "GET",
      path: "/api/v1/app/updates",
      answer: () => {
        const { airgap } = context.mode();
        // The air gap is checked first: `[]`, not marked as mock data.
        if (!airgap && integrationOn(context)) {
          const releases = mockData().availableReleases ?? [];
          const updates = releases.map(({ versionLabel, createdAt, releaseNotes }) => ({
            versionLabel,
            createdAt,
            releaseNotes,
          }));
          return goJson(200, updates, mockHeader);
        }
        const updates = state.updates.map((update) => ({
          versionLabel: update.version,
          releaseNotes: update.releaseNotes ?? "",
          createdAt: stamp(update.releaseDate, context.created),
        }));
        return encoded(sdkUpdatesSchema, airgap ? [] : updates, staleHeaders(context));
      },
    },
    {
      method: "GET",
      path: "/api/v1/app/history",
      answer: () => {
        // Integration mode serves the deployed releases in the mock data's order, Helm or not.
        if (integrationOn(context)) {
          const releases = (mockData().deployedReleases ?? []).map(goRelease);
          return goJson(200, { releases }, mockHeader);
        }
        // The service encodes a Go error value here: `{}`.
        if (!context.mode().helmManaged) return goJson(400, {});
        return encoded(sdkHistorySchema, {
          releases: (state.history ?? [state.current]).map(release),
        });
      },
    },
  ];

  return {
    routes,
    set(next) {
      state = { ...state, ...structuredClone(next) };
    },
    reset() {
      state = initial();
    },
  };
}
