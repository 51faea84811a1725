import * as z from "zod/mini";
import { Timestamp } from "../clients/integration-api/timestamp.ts";
import {
  kotsLicenseSchema,
  type SdkLicenseField,
  type SdkLicenseFlags,
  type SdkMockData,
  type SdkRelease,
  sdkAppInfoSchema,
  sdkAppStatusSchema,
  sdkHistorySchema,
  sdkLicenseFieldSchema,
  sdkLicenseFieldsSchema,
  sdkLicenseFlagNames,
  sdkLicenseInfoSchema,
  sdkMockAppStatusSchema,
  sdkMockDataSchema,
  sdkMockReleaseSchema,
  sdkSupportBundleSchema,
  sdkUpdatesSchema,
} from "../clients/sdk-api/sdk-records.ts";
import { jsonEqual } from "../internal/json-equal.ts";
import type { FakeFailure } from "./fake-integration-api.ts";
import { decodeSegment } from "./fake-responses.ts";

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

/** A license field of the fake's newer API, served with its signatures as given. */
export interface FakeSdkLicenseField {
  name: string;
  title?: string;
  description?: string;
  /** Left out of the answer when absent (the field then signs as `<nil>`). */
  value?: string | number | boolean;
  valueType?: string;
  isHidden?: boolean;
  signature?: { v1?: string; v2?: string };
}

/** The license the fake's newer API (and its admin console endpoint) serves. */
export interface FakeSdkLicense {
  licenseId: string;
  customerName: string;
  customerId?: string;
  customerEmail?: string;
  channelName?: string;
  licenseType?: string;
  appSlug?: string;
  licenseSequence?: number;
  /** `channelID` (default "fake-channel-id"). */
  channelId?: string;
  /** The vendor's address (default `https://replicated.app`). */
  endpoint?: string;
  /**
   * The feature flags; those not given are false, except `isAirgapSupported` and
   * `isSupportBundleUploadSupported` (true unless given).
   */
  flags?: Partial<SdkLicenseFlags>;
  /** The fields, `expires_at` included when the license expires. */
  fields: FakeSdkLicenseField[];
}

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

/** The service's behaviour switches; each can be changed at any time with `setMode()`. */
export interface FakeSdkMode {
  /**
   * Air gap: updates are always `[]`, support bundle uploads answer 400, and custom metrics go
   * to the service's local report instead of the vendor (still in `reportedCustomMetrics`).
   */
  airgap?: boolean;
  /**
   * Read-only mode, as the service (1.19.0+) does it: DELETE of a custom metric, instance tags,
   * support bundle metadata and mock data answer 422 `{"error":…,"readOnlyMode":true}`; POST and
   * PATCH of custom metrics answer 200 without storing anything (a PATCH merges with what was
   * stored before) and still report the result, except in an air gap, where it is dropped.
   */
  readOnly?: boolean;
  /**
   * Integration mode (a `"dev"` license only): app info, status, updates and history serve the
   * mock data (see {@link FakeSdkApi.setMockData}) with `X-Replicated-Mock-Data: true`.
   */
  integrationMode?: boolean;
  /**
   * The service runs from a Helm release (default true, as the chart always sets): when false,
   * history answers 400 `{}` outside integration mode.
   */
  helmManaged?: boolean;
  /** The vendor is unreachable: license and updates carry `X-Replicated-Served-From-Cache: true`. */
  servedFromCache?: boolean;
  /**
   * The service's version (default "1.19.0"): before 1.17.0 there is no support bundle upload,
   * before 1.18.0 no support bundle metadata; their routes answer 404.
   */
  serviceVersion?: string;
}

/** The fake's starting state; see {@link createFakeSdkApi}. */
export interface FakeSdkApiOptions extends FakeSdkMode {
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
  /** The license (default: `fakeSdkLicenseDefault`). */
  license?: FakeSdkLicense;
  /** Integration mode's mock data (default: the service's own, `fakeSdkMockDataDefault`). */
  mockData?: FakeSdkMockData;
  /** The clock, for dates and for the 60-second replay cache. */
  now?: () => Date;
}

/** A write the fake received, and whether its replay cache answered it. */
export interface FakeSdkWrite {
  method: string;
  path: string;
  /** The JSON body (undefined for a DELETE or a support bundle). */
  body: unknown;
  replayed: boolean;
}

/** A support bundle the fake accepted. */
export interface FakeSupportBundle {
  bundleId: string;
  slug: string;
  contentType: string;
  size: number;
}

/** A fake of the platform's newer in-cluster API (and the admin console's license endpoint). */
export interface FakeSdkApi {
  /**
   * Answers a request, as the service would; an injected network error is `Response.error()`
   * (msw fails the request; a server adapter drops the connection).
   */
  respond(request: Request): Promise<Response>;
  /** A drop-in `fetch` that calls the fake in-process; an injected network error rejects. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Every request received, oldest first: `GET /api/v1/app/info`. */
  readonly requests: readonly string[];
  /** The writes received, replays included. */
  readonly writes: readonly FakeSdkWrite[];
  /** The custom metrics as stored (the service's Secret): unchanged in read-only mode. */
  readonly customMetrics: Readonly<Record<string, string | number | boolean>>;
  /**
   * Each full set of custom metrics the service reported, oldest first: sent to the vendor, or
   * in an air gap written to its local report. A read-only air gap reports nothing.
   */
  readonly reportedCustomMetrics: readonly Readonly<Record<string, string | number | boolean>>[];
  /** Integration mode's mock data as GET /api/v1/integration/mock-data serves it. */
  readonly mockData: FakeSdkMockData;
  /** The instance tags as last sent, or undefined. */
  readonly instanceTags: { force: boolean; tags: Record<string, string> } | undefined;
  /** The support bundles uploaded. */
  readonly supportBundles: readonly FakeSupportBundle[];
  /** The support bundle metadata as last set or merged. */
  readonly supportBundleMetadata: Readonly<Record<string, string>>;
  /** The mode switches now in force. */
  readonly mode: Readonly<Required<FakeSdkMode>>;
  setMode(mode: FakeSdkMode): void;
  setCurrent(current: NonNullable<FakeSdkApiOptions["current"]>): void;
  setUpdates(updates: readonly FakeSdkUpdate[]): void;
  setHistory(history: readonly FakeSdkRelease[]): void;
  setAppStatus(status: NonNullable<FakeSdkApiOptions["appStatus"]>): void;
  setLicense(license: FakeSdkLicense): void;
  /** Replaces integration mode's mock data, as POST /api/v1/integration/mock-data does. */
  setMockData(data: FakeSdkMockData): void;
  /** Makes the next `count` requests to a known route fail (failures queue). */
  failNext(count: number, failure: FakeFailure): void;
  /** Back to the state given at creation: no requests, writes, metrics, tags or bundles. */
  reset(): void;
}

/** The license a fake starts with: a dev license, one Integer field `seat_count` of 10, unsigned. */
export const fakeSdkLicenseDefault: FakeSdkLicense = {
  licenseId: "fake-license-id",
  customerName: "Example Corp",
  customerId: "fake-customer-id",
  customerEmail: "admin@example.com",
  channelName: "Stable",
  licenseType: "dev",
  appSlug: "fake-app",
  fields: [{ name: "seat_count", title: "Seat count", value: 10, valueType: "Integer" }],
};

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

const replayWindowMs = 60_000;
const defaultServiceVersion = "1.19.0";

type Answer = Response | Promise<Response>;
interface Route {
  method: string;
  path: RegExp;
  /** A write, recorded in `writes`; the replay cache keys the `cached` ones. */
  write?: "cached" | "uncached";
  /** Read-only mode refuses it with 422 and this message (the service's own). */
  refusedReadOnly?: string;
  /** Only for a `"dev"` license: anything else answers 403 (the service's EnforceMockAccess). */
  devOnly?: boolean;
  /** The service version that added the route. */
  since?: string;
  answer(request: Request, segment: string): Answer;
}

/**
 * Creates a fake of the platform's newer in-cluster API (the Replicated SDK service, its
 * default address `http://replicated:3000`) as editable state and a Web `Request` to `Response`
 * handler: app info, status, updates and history; license info, fields and one field (404 with a
 * JSON string for an unknown one); custom metrics (POST replaces, PATCH merges, DELETE), instance
 * tags, support bundles and their metadata. It serves the admin console's compatibility license
 * (`GET /license/v1/license`) from the same license. The service's behaviours are there to test
 * against: the 60-second replay cache of writes (`X-Replicated-Rate-Limited`), read-only mode
 * (422 for DELETE of a metric, instance tags, bundle metadata and mock data; custom metrics taken
 * but not stored, dropped in an air gap), the air gap's empty updates, stale answers
 * (`X-Replicated-Served-From-Cache`), integration mode (a dev license's mock data, marked
 * `X-Replicated-Mock-Data`; 403 for other licenses), history outside Helm (400), an older
 * service without the newer routes (404), and injected failures. Bodies the service cannot
 * decode get its statuses (instance tags: 400 for a value of another JSON type, 500 for no
 * JSON). Every record is encoded by the zod schema the clients decode it with (integration
 * mode's answers are built from the mock data's wire form, which the service keeps as text).
 *
 * @example
 * ```ts
 * const api = createFakeSdkApi({ updates: [{ version: "1.1.0" }] });
 * const version = createVersionClient({ api: "sdk", baseUrl: "http://replicated.test", fetch: api.fetch });
 * await version.updates(); // [{ version: "1.1.0", releaseNotes: "", releaseDate }]
 * ```
 */
export function createFakeSdkApi(options: FakeSdkApiOptions = {}): FakeSdkApi {
  const now = options.now ?? (() => new Date());
  const created = now();
  const stamp = (value: string | Date | undefined, fallback?: Date) =>
    value === undefined
      ? fallback === undefined
        ? undefined
        : Timestamp.parse(fallback.toISOString())
      : Timestamp.parse(typeof value === "string" ? value : value.toISOString());
  const release = (init: FakeSdkRelease): SdkRelease => ({
    versionLabel: init.version,
    releaseNotes: init.releaseNotes ?? "",
    createdAt: stamp(init.releaseDate, created),
    deployedAt: stamp(init.installDate),
    ...(init.helmReleaseName === undefined ? {} : { helmReleaseName: init.helmReleaseName }),
    ...(init.helmReleaseRevision === undefined
      ? {}
      : { helmReleaseRevision: init.helmReleaseRevision }),
    ...(init.helmReleaseNamespace === undefined
      ? {}
      : { helmReleaseNamespace: init.helmReleaseNamespace }),
  });

  interface State {
    current: NonNullable<FakeSdkApiOptions["current"]>;
    updates: readonly FakeSdkUpdate[];
    history: readonly FakeSdkRelease[] | undefined;
    appStatus: NonNullable<FakeSdkApiOptions["appStatus"]>;
    license: FakeSdkLicense;
    mockData: FakeSdkMockData;
    mode: Required<FakeSdkMode>;
    requests: string[];
    writes: FakeSdkWrite[];
    customMetrics: Record<string, string | number | boolean>;
    reported: Record<string, string | number | boolean>[];
    instanceTags: { force: boolean; tags: Record<string, string> } | undefined;
    supportBundles: FakeSupportBundle[];
    supportBundleMetadata: Record<string, string>;
    replay: Map<string, { at: number; body: unknown; status: number; answer: string | null }>;
    failures: { failure: FakeFailure; remaining: number }[];
  }
  const initial = (): State => ({
    current: structuredClone(options.current ?? { version: "1.0.0", releaseSequence: 1 }),
    updates: structuredClone(options.updates ?? []),
    history: options.history === undefined ? undefined : structuredClone(options.history),
    appStatus: structuredClone(options.appStatus ?? {}),
    license: structuredClone(options.license ?? fakeSdkLicenseDefault),
    mockData: structuredClone(options.mockData ?? fakeSdkMockDataDefault),
    mode: {
      airgap: options.airgap ?? false,
      readOnly: options.readOnly ?? false,
      integrationMode: options.integrationMode ?? false,
      helmManaged: options.helmManaged ?? true,
      servedFromCache: options.servedFromCache ?? false,
      serviceVersion: options.serviceVersion ?? defaultServiceVersion,
    },
    requests: [],
    writes: [],
    customMetrics: {},
    reported: [],
    instanceTags: undefined,
    supportBundles: [],
    supportBundleMetadata: {},
    replay: new Map(),
    failures: [],
  });
  let state = initial();

  const encode = <Schema extends z.ZodMiniType>(
    schema: Schema,
    value: z.output<Schema>,
    headers: Record<string, string> = {},
    status = 200,
  ) => json(status, z.encode(schema, value), headers);
  const stale = (): Record<string, string> =>
    state.mode.servedFromCache ? { "x-replicated-served-from-cache": "true" } : {};

  // /license/fields names each field; the info's entitlements do not (the service's own types).
  const licenseFields = (named = true): Record<string, SdkLicenseField> =>
    Object.fromEntries(
      state.license.fields.map((field) => [field.name, toWireField(field, named)]),
    );
  const devLicense = () => (state.license.licenseType ?? "dev") === "dev";
  const integrationOn = () => state.mode.integrationMode && devLicense();
  const mockHeader = { "x-replicated-mock-data": "true" };
  /** The mock data as the service keeps it (decoded, then written back by Go's rules). */
  const mock = (): GoMockData => {
    const normalized = goMockData(state.mockData);
    if (typeof normalized === "string") throw new TypeError(normalized);
    return normalized;
  };
  /** A full set of custom metrics goes upstream (air gap: to the local report) unless both. */
  const report = (metrics: Record<string, string | number | boolean>) => {
    if (!(state.mode.airgap && state.mode.readOnly)) state.reported.push({ ...metrics });
  };
  const expiresAt = () =>
    state.license.fields.find((field) => field.name === "expires_at")?.value ?? undefined;

  const routes: Route[] = [
    {
      method: "GET",
      path: /^\/api\/v1\/app\/info$/,
      answer: () => {
        const { current } = state;
        const app = options.app ?? {};
        if (integrationOn()) {
          const data = mock();
          const v2 = data.version === "v2";
          const release = data.currentRelease;
          return json(
            200,
            {
              instanceID: app.instanceId ?? "fake-instance-id",
              appSlug: app.appSlug ?? state.license.appSlug ?? "fake-app",
              appName: app.appName ?? "Fake App",
              appStatus: typeof data.appStatus === "string" ? data.appStatus : data.appStatus.state,
              ...(data.helmChartURL === undefined ? {} : { helmChartURL: data.helmChartURL }),
              currentRelease: goRelease(release),
              // v1 keeps the install's channel; v2 takes the mock release's (empty without one).
              channelID: v2 ? (release?.channelID ?? "") : (app.channelId ?? "fake-channel-id"),
              channelName: v2
                ? (release?.channelName ?? "")
                : (app.channelName ?? state.license.channelName ?? "Stable"),
              channelSequence: v2
                ? (release?.channelSequence ?? 0)
                : (current.channelSequence ?? -1),
              releaseSequence: v2
                ? (release?.releaseSequence ?? 0)
                : (current.releaseSequence ?? -1),
            },
            mockHeader,
          );
        }
        return encode(sdkAppInfoSchema, {
          instanceID: app.instanceId ?? "fake-instance-id",
          appSlug: app.appSlug ?? state.license.appSlug ?? "fake-app",
          appName: app.appName ?? "Fake App",
          appStatus: state.appStatus.state ?? "ready",
          currentRelease: release(current),
          channelID: app.channelId ?? "fake-channel-id",
          channelName: app.channelName ?? state.license.channelName ?? "Stable",
          channelSequence: current.channelSequence,
          releaseSequence: current.releaseSequence,
        });
      },
    },
    {
      method: "GET",
      path: /^\/api\/v1\/app\/status$/,
      answer: () => {
        if (integrationOn()) {
          const data = mock();
          // v1 mock data has no status object: the service fails the call.
          if (typeof data.appStatus === "string") return new Response(null, { status: 500 });
          return json(200, { appStatus: data.appStatus }, mockHeader);
        }
        return encode(sdkAppStatusSchema, {
          appStatus: {
            appSlug: state.license.appSlug ?? "fake-app",
            resourceStates: (state.appStatus.resourceStates ?? []).map((resource) => ({
              ...resource,
              namespace: resource.namespace ?? "default",
            })),
            updatedAt: stamp(undefined, now()),
            state: state.appStatus.state ?? "ready",
            sequence: state.current.releaseSequence ?? 1,
          },
        });
      },
    },
    {
      method: "GET",
      path: /^\/api\/v1\/app\/updates$/,
      answer: () => {
        // The air gap is checked first: `[]`, not marked as mock data.
        if (!state.mode.airgap && integrationOn()) {
          const releases = mock().availableReleases ?? [];
          return json(
            200,
            releases.map(({ versionLabel, createdAt, releaseNotes }) => ({
              versionLabel,
              createdAt,
              releaseNotes,
            })),
            mockHeader,
          );
        }
        return encode(
          sdkUpdatesSchema,
          state.mode.airgap
            ? []
            : state.updates.map((update) => ({
                versionLabel: update.version,
                releaseNotes: update.releaseNotes ?? "",
                createdAt: stamp(update.releaseDate, created),
              })),
          stale(),
        );
      },
    },
    {
      method: "GET",
      path: /^\/api\/v1\/app\/history$/,
      answer: () => {
        // Integration mode serves the deployed releases in the mock data's order, Helm or not.
        if (integrationOn()) {
          return json(
            200,
            { releases: (mock().deployedReleases ?? []).map(goRelease) },
            mockHeader,
          );
        }
        // The service encodes a Go error value here: `{}`.
        if (!state.mode.helmManaged) return json(400, {});
        return encode(sdkHistorySchema, {
          releases: (state.history ?? [state.current]).map(release),
        });
      },
    },
    {
      method: "GET",
      path: /^\/api\/v1\/license\/info$/,
      answer: () => {
        const { license } = state;
        return encode(
          sdkLicenseInfoSchema,
          {
            licenseID: license.licenseId,
            appSlug: license.appSlug ?? "fake-app",
            channelID: license.channelId ?? "fake-channel-id",
            channelName: license.channelName ?? "Stable",
            customerID: license.customerId ?? "",
            customerName: license.customerName,
            customerEmail: license.customerEmail ?? "",
            licenseType: license.licenseType ?? "dev",
            endpoint: license.endpoint ?? "https://replicated.app",
            licenseSequence: license.licenseSequence ?? 1,
            ...(Object.fromEntries(
              sdkLicenseFlagNames.map((name) => [
                name,
                license.flags?.[name] ?? defaultFlags[name],
              ]),
            ) as Record<keyof SdkLicenseFlags, boolean>),
            entitlements: licenseFields(false),
          },
          stale(),
        );
      },
    },
    {
      method: "GET",
      path: /^\/api\/v1\/license\/fields$/,
      answer: () => encode(sdkLicenseFieldsSchema, licenseFields(), stale()),
    },
    {
      method: "GET",
      path: /^\/api\/v1\/license\/fields\/([^/]+)$/,
      answer: (_request, segment) => {
        const name = decodeSegment(segment);
        const found = state.license.fields.find((field) => field.name === name);
        if (found === undefined) return json(404, `license field "${name}" not found`);
        return encode(sdkLicenseFieldSchema, toWireField(found, true), stale());
      },
    },
    ...(["POST", "PATCH"] as const).map(
      (method): Route => ({
        method,
        path: /^\/api\/v1\/app\/custom-metrics$/,
        write: "cached",
        // Not refused in read-only mode: the service skips its local save and still reports.
        answer: (request) =>
          withMetrics(request, (data) =>
            method === "POST" ? data : { ...state.customMetrics, ...data },
          ),
      }),
    ),
    {
      method: "DELETE",
      path: /^\/api\/v1\/app\/custom-metrics\/([^/]+)$/,
      write: "cached",
      refusedReadOnly: "custom metrics delete is unavailable in read-only mode",
      answer: (_request, segment) => {
        const key = decodeSegment(segment);
        state.customMetrics = Object.fromEntries(
          Object.entries(state.customMetrics).filter(([name]) => name !== key),
        );
        report(state.customMetrics);
        return new Response(null, { status: 204 });
      },
    },
    {
      method: "POST",
      path: /^\/api\/v1\/app\/instance-tags$/,
      write: "cached",
      refusedReadOnly: "instance tags are unavailable in read-only mode",
      answer: async (request) => {
        // Go decodes into {data:{force bool, tags map[string]string}}: a value of another type
        // is a 400 naming its JSON type; a body that is no JSON at all is a 500.
        const body = parseStrict(await request.text());
        if (body === invalidJson) return new Response(null, { status: 500 });
        const wrongType = instanceTagsTypeError(body);
        if (wrongType !== undefined) {
          return text(
            400,
            `${wrongType} not supported, only string values are allowed on instance-tags`,
          );
        }
        const data = isObject(body) && isObject(body.data) ? body.data : {};
        const tags = isObject(data.tags) ? data.tags : {};
        state.instanceTags = {
          force: data.force === true,
          tags: Object.fromEntries(
            Object.entries(tags).map(([name, value]) => [name, value ?? ""]),
          ) as Record<string, string>,
        };
        return json(200, "");
      },
    },
    {
      method: "POST",
      path: /^\/api\/v1\/supportbundle$/,
      since: "1.17.0",
      answer: async (request) => {
        if (state.mode.airgap) {
          return text(400, "support bundle upload is not available in airgap mode");
        }
        const bytes = await request.arrayBuffer();
        // The service refuses a Content-Length of 0 (or none): an empty bundle never uploads.
        if (bytes.byteLength === 0) return text(400, "Content-Length header is required");
        const bundle = {
          bundleId: `bundle-${state.supportBundles.length + 1}`,
          slug: `fake-bundle-${state.supportBundles.length + 1}`,
        };
        state.supportBundles.push({
          ...bundle,
          contentType: request.headers.get("content-type") ?? "",
          size: bytes.byteLength,
        });
        return encode(sdkSupportBundleSchema, bundle, {}, 201);
      },
    },
    ...(["POST", "PATCH"] as const).map(
      (method): Route => ({
        method,
        path: /^\/api\/v1\/supportbundle\/metadata$/,
        since: "1.18.0",
        write: "uncached",
        refusedReadOnly: "support bundle metadata is unavailable in read-only mode",
        answer: async (request) => {
          const body = parseStrict(await request.text());
          if (body === invalidJson || (body !== null && !isObject(body))) {
            return text(400, "invalid request body");
          }
          const data = body?.data;
          if (data === undefined || data === null) return text(400, "data is required");
          if (
            !isObject(data) ||
            Object.values(data).some((value) => typeof value !== "string" && value !== null)
          ) {
            return text(400, "invalid request body");
          }
          const entries = Object.fromEntries(
            Object.entries(data).map(([name, value]) => [name, value ?? ""]),
          ) as Record<string, string>;
          state.supportBundleMetadata =
            method === "POST" ? entries : { ...state.supportBundleMetadata, ...entries };
          return json(200, "");
        },
      }),
    ),
    {
      method: "GET",
      path: /^\/api\/v1\/integration\/status$/,
      devOnly: true,
      answer: () => json(200, { isEnabled: integrationOn() }),
    },
    {
      method: "GET",
      path: /^\/api\/v1\/integration\/mock-data$/,
      devOnly: true,
      answer: () => (integrationOn() ? json(200, mock()) : new Response(null, { status: 403 })),
    },
    {
      method: "POST",
      path: /^\/api\/v1\/integration\/mock-data$/,
      devOnly: true,
      refusedReadOnly: "mock data updates are unavailable in read-only mode",
      answer: async (request) => {
        if (!integrationOn()) return new Response(null, { status: 403 });
        const body = parseStrict(await request.text());
        const normalized = body === invalidJson ? "not JSON" : goMockData(body);
        if (typeof normalized === "string") return new Response(null, { status: 400 });
        state.mockData = normalized;
        return new Response(null, { status: 201 });
      },
    },
    {
      // The fake's own control route (not the service's): switch modes, queue failures.
      method: "POST",
      path: /^\/mock\/v1\/control$/,
      answer: async (request) => {
        const decoded = z.safeDecode(controlSchema, (await readBody(request)) as never);
        if (!decoded.success) return text(400, z.prettifyError(decoded.error));
        const { mode, failNext, licenseType } = decoded.data;
        if (licenseType !== undefined) state.license = { ...state.license, licenseType };
        if (mode !== undefined) {
          state.mode = {
            ...state.mode,
            ...(Object.fromEntries(
              Object.entries(mode).filter(([, value]) => value !== undefined),
            ) as FakeSdkMode),
          };
        }
        if (failNext !== undefined) {
          const { count, status } = failNext;
          state.failures.push({
            failure: status === undefined ? { networkError: true } : { status },
            remaining: count,
          });
        }
        return json(200, { mode: state.mode, queuedFailures: state.failures.length });
      },
    },
    {
      method: "GET",
      path: /^\/license\/v1\/license$/,
      answer: () => {
        const { license } = state;
        const expires = expiresAt();
        return encode(kotsLicenseSchema, {
          license_id: license.licenseId,
          installation_id: "fake-kots-app-id",
          assignee: license.customerName,
          release_channel: license.channelName ?? "Stable",
          license_type: license.licenseType ?? "dev",
          ...(typeof expires === "string" && expires !== ""
            ? { expiration_time: Timestamp.parse(expires) }
            : {}),
          fields: license.fields
            .filter((field) => field.name !== "expires_at")
            .map((field) => ({
              field: field.name,
              title: field.title ?? field.name,
              type: field.valueType ?? "String",
              value: field.value ?? null,
              ...(field.isHidden === true ? { hide_from_customer: true } : {}),
            })),
        });
      },
    },
  ];

  /**
   * POST/PATCH custom metrics: Go decodes `{"data":{…}}` (a value of another type, or no JSON,
   * is a 400 without a body), refuses empty data and null, array or object values, merges, and
   * reports the result; read-only mode skips only the local save.
   */
  async function withMetrics(
    request: Request,
    merge: (
      data: Record<string, string | number | boolean>,
    ) => Record<string, string | number | boolean>,
  ): Promise<Response> {
    const body = parseStrict(await request.text());
    if (body === invalidJson || (body !== null && !isObject(body))) {
      return new Response(null, { status: 400 });
    }
    const data = body?.data ?? null;
    if (data !== null && !isObject(data)) return new Response(null, { status: 400 });
    if (data === null || Object.keys(data).length === 0) return text(400, "no data provided");
    // A number beyond float64 (1e400) fails Go's decoding, a 400 without a body; JSON.parse
    // reads it as Infinity.
    if (Object.values(data).some((value) => typeof value === "number" && !Number.isFinite(value))) {
      return new Response(null, { status: 400 });
    }
    for (const [key, value] of Object.entries(data)) {
      const kind =
        value === null
          ? "nil"
          : Array.isArray(value)
            ? "an array"
            : typeof value === "object"
              ? "a map"
              : undefined;
      if (kind !== undefined) {
        return text(400, `${key} value is ${kind}, only scalar values are allowed`);
      }
    }
    const merged = merge(
      Object.fromEntries(Object.entries(data)) as Record<string, string | number | boolean>,
    );
    if (!state.mode.readOnly) state.customMetrics = merged;
    report(merged);
    return json(200, "");
  }

  const takeFailure = (): FakeFailure | undefined => {
    const next = state.failures[0];
    if (next === undefined) return undefined;
    next.remaining -= 1;
    if (next.remaining === 0) state.failures.shift();
    return next.failure;
  };

  const respond = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const { pathname } = url;
    state.requests.push(`${request.method} ${pathname}`);
    if (pathname === "/healthz") return json(200, { version: state.mode.serviceVersion });
    const matches = routes.flatMap((route) => {
      const match = route.path.exec(pathname);
      return match !== null && olderThan(state.mode.serviceVersion, route.since) === false
        ? [{ route, segment: match[1] ?? "" }]
        : [];
    });
    // gorilla/mux: 404 text for an unknown path, 405 without CORS headers for another method.
    if (matches.length === 0) return text(404, "404 page not found");
    const chosen = matches.find(({ route }) => route.method === request.method);
    if (chosen === undefined) return new Response(null, { status: 405 });
    const failure = pathname.startsWith("/mock/") ? undefined : takeFailure();
    if (failure !== undefined) {
      if ("networkError" in failure) return Response.error();
      return new Response("injected failure", {
        status: failure.status,
        headers: { "content-type": "text/plain", ...failure.headers },
      });
    }
    const { route, segment } = chosen;
    const answer =
      route.devOnly === true && !devLicense()
        ? new Response(null, { status: 403 })
        : route.write === undefined
          ? (refusal() ?? (await route.answer(request, segment)))
          : await write();
    const headers = new Headers(answer.headers);
    headers.set("access-control-allow-origin", "*");
    return answer.type === "error"
      ? answer
      : new Response(answer.body, { status: answer.status, headers });

    // Inside the handler, after the replay cache: a refusal is no 2xx, so it is never cached.
    function refusal(): Response | undefined {
      if (!state.mode.readOnly || route.refusedReadOnly === undefined) return undefined;
      return json(422, { error: route.refusedReadOnly, readOnlyMode: true });
    }

    async function write(): Promise<Response> {
      const isJson = request.method !== "DELETE";
      const text = isJson ? await request.text() : "";
      const body = parse(text);
      // The service keys on the query as Go encodes it: sorted by name, so order does not matter.
      const query = new URLSearchParams(url.search);
      query.sort();
      const key = `${request.method} ${pathname}?${query}`;
      const at = now().getTime();
      const cached = route.write === "cached" ? state.replay.get(key) : undefined;
      if (cached !== undefined && at - cached.at < replayWindowMs && jsonEqual(cached.body, body)) {
        state.writes.push({ method: request.method, path: pathname, body, replayed: true });
        return new Response(cached.answer, {
          status: cached.status,
          headers: {
            "content-type": "application/json",
            "x-replicated-served-from-cache": "true",
            "x-replicated-rate-limited": "true",
          },
        });
      }
      state.writes.push({ method: request.method, path: pathname, body, replayed: false });
      const refused = refusal();
      if (refused !== undefined) return refused;
      const answer = await route.answer(
        new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: text || null,
        }),
        segment,
      );
      if (route.write === "cached" && answer.status >= 200 && answer.status < 300) {
        const recorded = answer.status === 204 ? null : await answer.clone().text();
        state.replay.set(key, { at, body, status: answer.status, answer: recorded });
      }
      return answer;
    }
  };

  return {
    respond,
    async fetch(input, init) {
      const response = await respond(new Request(input, init));
      if (response.type === "error") {
        throw new TypeError("fetch failed", {
          cause: new Error("A network error was injected with failNext()."),
        });
      }
      return response;
    },
    get requests() {
      return [...state.requests];
    },
    get writes() {
      return structuredClone(state.writes);
    },
    get customMetrics() {
      return { ...state.customMetrics };
    },
    get reportedCustomMetrics() {
      return structuredClone(state.reported);
    },
    get mockData() {
      return mock();
    },
    get instanceTags() {
      return structuredClone(state.instanceTags);
    },
    get supportBundles() {
      return structuredClone(state.supportBundles);
    },
    get supportBundleMetadata() {
      return { ...state.supportBundleMetadata };
    },
    get mode() {
      return { ...state.mode };
    },
    setMode(mode) {
      state.mode = {
        ...state.mode,
        ...Object.fromEntries(Object.entries(mode).filter(([, value]) => value !== undefined)),
      };
    },
    setCurrent(current) {
      state.current = structuredClone(current);
    },
    setUpdates(updates) {
      state.updates = structuredClone(updates);
    },
    setHistory(history) {
      state.history = structuredClone(history);
    },
    setAppStatus(status) {
      state.appStatus = structuredClone(status);
    },
    setLicense(license) {
      state.license = structuredClone(license);
    },
    setMockData(data) {
      const normalized = goMockData(data);
      if (typeof normalized === "string") throw new TypeError(`setMockData: ${normalized}`);
      state.mockData = normalized;
    },
    failNext(count, failure) {
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new RangeError(`failNext: count must be a positive integer, got ${count}.`);
      }
      state.failures.push({ failure, remaining: count });
    },
    reset() {
      state = initial();
    },
  };
}

/** POST /mock/v1/control: the fake's own switches. */
const controlSchema = z.object({
  mode: z.optional(
    z.object({
      airgap: z.optional(z.boolean()),
      readOnly: z.optional(z.boolean()),
      integrationMode: z.optional(z.boolean()),
      helmManaged: z.optional(z.boolean()),
      servedFromCache: z.optional(z.boolean()),
      serviceVersion: z.optional(z.string()),
    }),
  ),
  /** The license's type: integration mode needs "dev". */
  licenseType: z.optional(z.string()),
  failNext: z.optional(
    z.object({
      count: z.int().check(z.minimum(1)),
      status: z.optional(z.int().check(z.minimum(400), z.maximum(599))),
    }),
  ),
});

/** A field as Go writes it: empty strings and `false` left out, `signature` always there. */
function toWireField(field: FakeSdkLicenseField, named: boolean): SdkLicenseField {
  return {
    ...(named ? { name: field.name } : {}),
    ...(field.title ? { title: field.title } : {}),
    ...(field.description ? { description: field.description } : {}),
    ...(field.value === undefined ? {} : { value: field.value }),
    ...(field.valueType ? { valueType: field.valueType } : {}),
    ...(field.isHidden === true ? { isHidden: true } : {}),
    signature: { ...field.signature },
  };
}

const defaultFlags: SdkLicenseFlags = {
  isAirgapSupported: true,
  isGitOpsSupported: false,
  isIdentityServiceSupported: false,
  isGeoaxisSupported: false,
  isSnapshotSupported: false,
  isSupportBundleUploadSupported: true,
  isSemverRequired: false,
};

/** Mock data as the service keeps it: decoded by Go's types, written back with its rules. */
type GoMockData = Omit<SdkMockData, "appStatus"> & {
  appStatus: string | z.output<typeof sdkMockAppStatusSchema>;
};
type GoMockRelease = NonNullable<SdkMockData["currentRelease"]>;

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
function goRelease(release: GoMockRelease | undefined) {
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

/** Go's decoding of the instance-tags body: the JSON type of the first misfit value, if any. */
function instanceTagsTypeError(body: unknown): string | undefined {
  const misfit = (value: unknown, fits: (value: unknown) => boolean) =>
    value === null || value === undefined || fits(value) ? undefined : goKind(value);
  const top = misfit(body, isObject);
  if (top !== undefined || !isObject(body)) return top;
  const data = body.data;
  const wrongData = misfit(data, isObject);
  if (wrongData !== undefined || !isObject(data)) return wrongData;
  const force = misfit(data.force, (value) => typeof value === "boolean");
  if (force !== undefined) return force;
  const tags = misfit(data.tags, isObject);
  if (tags !== undefined || !isObject(data.tags)) return tags;
  for (const value of Object.values(data.tags)) {
    const wrong = misfit(value, (item) => typeof item === "string");
    if (wrong !== undefined) return wrong;
  }
  return undefined;
}

/** The JSON type as Go's UnmarshalTypeError names it. */
function goKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value;
}

const invalidJson = Symbol("invalid JSON");

/** Go's json.Decoder: an empty body is an error (EOF), as is one that is not JSON. */
function parseStrict(body: string): unknown {
  if (body.trim() === "") return invalidJson;
  try {
    return JSON.parse(body);
  } catch {
    return invalidJson;
  }
}

/** Whether `version` predates `since` (major.minor.patch); false when either is absent. */
function olderThan(version: string, since: string | undefined): boolean {
  if (since === undefined) return false;
  const parts = (text: string) => text.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
  const [a = [], b = []] = [parts(version), parts(since)];
  for (let index = 0; index < 3; index++) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference < 0;
  }
  return false;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

function parse(body: string): unknown {
  if (body.trim() === "") return {};
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

async function readBody(request: Request): Promise<unknown> {
  return parse(await request.text());
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
