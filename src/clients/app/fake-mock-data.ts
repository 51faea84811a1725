import * as z from "zod/mini";
import { Timestamp } from "../integration-api/timestamp.ts";
import {
  goJson,
  integrationOn,
  invalidJson,
  isObject,
  parseStrict,
  type SdkFakeContext,
  type SdkFakeRoute,
} from "../sdk-api/fake-answers.ts";
import {
  type SdkMockData,
  sdkMockAppStatusSchema,
  sdkMockDataSchema,
  sdkMockReleaseSchema,
} from "../sdk-api/sdk-schemas.ts";

// Integration mode's part of the newer API's fake: the mock data a development license serves
// (its routes, its default, and the service's Go rules for decoding and writing it back), which
// the app's answers (fake.ts) serve in integration mode.

/**
 * Integration mode's mock data in the service's wire form (`versionLabel`, `channelID`...), as
 * POST /api/v1/integration/mock-data takes it; see {@link fakeSdkMockDataDefault}.
 */
export interface FakeSdkMockData {
  /** `v1` (or none): `appStatus` is a string, and GET /app/status answers 500; `v2`: an object. */
  version?: "v1" | "v2" | undefined;
  appStatus?: string | FakeSdkMockAppStatus | undefined;
  helmChartURL?: string | undefined;
  currentRelease?: FakeSdkMockRelease | undefined;
  deployedReleases?: FakeSdkMockRelease[] | null | undefined;
  availableReleases?: FakeSdkMockRelease[] | null | undefined;
}

/** A release of the mock data, under its wire names; an omitted field is the service's zero. */
export interface FakeSdkMockRelease {
  versionLabel?: string | undefined;
  releaseNotes?: string | undefined;
  /** RFC 3339 text, or Go's zero time `0001-01-01T00:00:00Z` for none. */
  createdAt?: string | undefined;
  deployedAt?: string | undefined;
  helmReleaseName?: string | undefined;
  helmReleaseRevision?: number | undefined;
  helmReleaseNamespace?: string | undefined;
  channelID?: string | undefined;
  channelName?: string | undefined;
  channelSequence?: number | undefined;
  releaseSequence?: number | undefined;
}

/** v2 mock data's `appStatus`, the status object of GET /api/v1/app/status. */
export interface FakeSdkMockAppStatus {
  appSlug?: string | undefined;
  resourceStates?:
    | { kind: string; name: string; namespace?: string | undefined; state: string }[]
    | null
    | undefined;
  updatedAt?: string | undefined;
  state?: string | undefined;
  sequence?: number | undefined;
}

const mockRelease = (versionLabel: string, day: string, revision?: number) => ({
  versionLabel,
  releaseNotes: `mock release release notes for ${versionLabel}`,
  createdAt: `2023-${day}T20:58:07Z`,
  deployedAt: `2023-${day}T21:58:07Z`,
  ...(revision === undefined
    ? {}
    : {
        helmReleaseName: "dev-parent-chart",
        helmReleaseRevision: revision,
        helmReleaseNamespace: "default",
      }),
});

/**
 * The mock data the service starts integration mode with (its `default_mock_data.yaml`, v2):
 * deployed releases oldest first, as the service serves them.
 */
export const fakeSdkMockDataDefault: FakeSdkMockData = {
  version: "v2",
  appStatus: {
    resourceStates: [{ kind: "deployment", name: "dev-app", namespace: "default", state: "ready" }],
    state: "ready",
  },
  helmChartURL: "oci://registry.replicated.com/dev-app/dev-channel/dev-parent-chart",
  currentRelease: {
    ...mockRelease("0.1.3-mock-release", "05-23", 3),
    releaseNotes: "mock release notes for 0.1.3",
    channelID: "dev-channel",
    channelName: "Dev Channel",
    channelSequence: 13,
    releaseSequence: 113,
  },
  deployedReleases: [
    mockRelease("0.1.1", "05-21", 1),
    mockRelease("0.1.2", "05-22", 2),
    mockRelease("0.1.3", "05-23", 3),
  ],
  availableReleases: [mockRelease("0.1.4", "05-24"), mockRelease("0.1.5", "06-01")],
};

/** Mock data as the service keeps it: decoded by Go's types, written back with its rules. */
export type GoMockData = Omit<SdkMockData, "appStatus"> & {
  appStatus: string | z.output<typeof sdkMockAppStatusSchema>;
};
type GoMockRelease = NonNullable<SdkMockData["currentRelease"]>;

/** The header that marks integration mode's answers. */
export const mockHeader = { "x-replicated-mock-data": "true" };

/** Integration mode's part of the newer API's fake: its routes and its mock data. */
export function createFakeMockData(
  context: SdkFakeContext,
  initialData: FakeSdkMockData | undefined,
): {
  routes: SdkFakeRoute[];
  /** The mock data as the service keeps it (decoded, then written back by Go's rules). */
  current(): GoMockData;
  set(data: FakeSdkMockData): void;
  reset(): void;
} {
  const initial = () => structuredClone(initialData ?? fakeSdkMockDataDefault);
  let data: FakeSdkMockData = initial();
  const current = (): GoMockData => {
    const normalized = goMockData(data);
    if (typeof normalized === "string") throw new TypeError(normalized);
    return normalized;
  };
  const routes: SdkFakeRoute[] = [
    {
      method: "GET",
      path: "/api/v1/integration/status",
      devOnly: true,
      answer: () => goJson(200, { isEnabled: integrationOn(context) }),
    },
    {
      method: "GET",
      path: "/api/v1/integration/mock-data",
      devOnly: true,
      answer: () =>
        integrationOn(context) ? goJson(200, current()) : new Response(null, { status: 403 }),
    },
    {
      method: "POST",
      path: "/api/v1/integration/mock-data",
      devOnly: true,
      refusedReadOnly: "mock data updates are unavailable in read-only mode",
      answer: async (request) => {
        if (!integrationOn(context)) return new Response(null, { status: 403 });
        const body = parseStrict(await request.text());
        const normalized = body === invalidJson ? "not JSON" : goMockData(body);
        if (typeof normalized === "string") return new Response(null, { status: 400 });
        data = normalized;
        return new Response(null, { status: 201 });
      },
    },
  ];
  return {
    routes,
    current,
    set(next) {
      const normalized = goMockData(next);
      if (typeof normalized === "string") throw new TypeError(`setMockData: ${normalized}`);
      data = normalized;
    },
    reset() {
      data = initial();
    },
  };
}

const goZeroTime = "0001-01-01T00:00:00Z";

/**
 * Decodes mock data as the service does (POST answers 400 when this fails, with the reason
 * returned as text) and writes it back as Go would: `omitempty` keys left out, every release key
 * present, a v2 status complete (Go's zero time for a missing `updatedAt`).
 */
function goMockData(input: unknown): GoMockData | string {
  if (input !== null && !isObject(input)) return "mock data must be a JSON object";
  const given = { ...input };
  if (given.version === "") delete given.version;
  const decoded = z.safeDecode(sdkMockDataSchema, given as never);
  if (!decoded.success) return z.prettifyError(decoded.error);
  const { version, appStatus, helmChartURL, currentRelease, deployedReleases, availableReleases } =
    decoded.data;
  const v2 = version === "v2";
  if (v2 ? typeof appStatus === "string" : typeof appStatus === "object") {
    return `appStatus must be ${v2 ? "a status object in v2" : "a state string in v1"} mock data`;
  }
  let status: GoMockData["appStatus"] = appStatus ?? "";
  if (v2) {
    const object = (appStatus ?? z.decode(sdkMockAppStatusSchema, {})) as Exclude<
      typeof appStatus,
      string | undefined
    >;
    if (object.updatedAt !== "") {
      try {
        Timestamp.parse(object.updatedAt);
      } catch {
        return "appStatus.updatedAt is not an RFC 3339 date-time";
      }
    }
    status = { ...object, updatedAt: object.updatedAt || goZeroTime };
  }
  return {
    ...(version === undefined ? {} : { version }),
    appStatus: status,
    ...(helmChartURL ? { helmChartURL } : {}),
    ...(currentRelease === undefined ? {} : { currentRelease }),
    ...(deployedReleases?.length ? { deployedReleases } : {}),
    ...(availableReleases?.length ? { availableReleases } : {}),
  };
}

/** A mock release as the app endpoints serve it (a `Release`: its Helm keys `omitempty`). */
export function goRelease(release: GoMockRelease | undefined) {
  const given = release ?? z.decode(sdkMockReleaseSchema, {});
  return {
    versionLabel: given.versionLabel,
    releaseNotes: given.releaseNotes,
    createdAt: given.createdAt,
    deployedAt: given.deployedAt,
    ...(given.helmReleaseName ? { helmReleaseName: given.helmReleaseName } : {}),
    ...(given.helmReleaseRevision ? { helmReleaseRevision: given.helmReleaseRevision } : {}),
    ...(given.helmReleaseNamespace ? { helmReleaseNamespace: given.helmReleaseNamespace } : {}),
  };
}
