import * as z from "zod/mini";
import { Timestamp } from "../clients/integration-api/timestamp.ts";
import {
  kotsLicenseSchema,
  type SdkLicenseField,
  type SdkRelease,
  sdkAppInfoSchema,
  sdkAppStatusSchema,
  sdkHistorySchema,
  sdkLicenseFieldSchema,
  sdkLicenseFieldsSchema,
  sdkLicenseInfoSchema,
  sdkReleaseSchema,
  sdkSupportBundleSchema,
  sdkUpdatesSchema,
} from "../clients/sdk-api/sdk-records.ts";
import type { FakeFailure } from "./fake-integration-api.ts";
import { decodeSegment } from "./fake-responses.ts";
import { jsonEqual } from "./json-equal.ts";

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
  /** The fields, `expires_at` included when the license expires. */
  fields: FakeSdkLicenseField[];
}

/** The service's behaviour switches; each can be changed at any time with `setMode()`. */
export interface FakeSdkMode {
  /** Air gap: updates are always `[]` and support bundle uploads answer 400. */
  airgap?: boolean;
  /** Read-only mode: writes answer 422 `{"error":…,"readOnlyMode":true}`. */
  readOnly?: boolean;
  /** Integration mode: app endpoints carry `X-Replicated-Mock-Data: true`. */
  integrationMode?: boolean;
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
  /** The custom metrics as last set or merged. */
  readonly customMetrics: Readonly<Record<string, string | number | boolean>>;
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

const replayWindowMs = 60_000;
const defaultServiceVersion = "1.19.0";

type Answer = Response | Promise<Response>;
interface Route {
  method: string;
  path: RegExp;
  /** A write the replay cache keys and read-only mode refuses. */
  write?: "cached" | "uncached";
  /** The service version that added the route. */
  since?: string;
  /** Marked with the mock-data header in integration mode. */
  app?: boolean;
  answer(request: Request, segment: string): Answer;
}

/**
 * Creates a fake of the platform's newer in-cluster API (the Replicated SDK service, its
 * default address `http://replicated:3000`) as editable state and a Web `Request` to `Response`
 * handler: app info, status, updates and history; license info, fields and one field (404 with a
 * JSON string for an unknown one); custom metrics (POST replaces, PATCH merges, DELETE), instance
 * tags, support bundles and their metadata. It serves the admin console's compatibility license
 * (`GET /license/v1/license`) from the same license. The service's behaviours are there to test
 * against: the 60-second replay cache of writes (`X-Replicated-Rate-Limited`), read-only mode's
 * 422, the air gap's empty updates, stale answers (`X-Replicated-Served-From-Cache`),
 * integration-mode data (`X-Replicated-Mock-Data`), an older service without the newer routes
 * (404), and injected failures. Every record is encoded by the zod schema the clients decode it
 * with.
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
    mode: Required<FakeSdkMode>;
    requests: string[];
    writes: FakeSdkWrite[];
    customMetrics: Record<string, string | number | boolean>;
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
    mode: {
      airgap: options.airgap ?? false,
      readOnly: options.readOnly ?? false,
      integrationMode: options.integrationMode ?? false,
      servedFromCache: options.servedFromCache ?? false,
      serviceVersion: options.serviceVersion ?? defaultServiceVersion,
    },
    requests: [],
    writes: [],
    customMetrics: {},
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

  const licenseFields = (): Record<string, SdkLicenseField> =>
    Object.fromEntries(state.license.fields.map((field) => [field.name, toWireField(field)]));
  const expiresAt = () =>
    state.license.fields.find((field) => field.name === "expires_at")?.value ?? undefined;

  const routes: Route[] = [
    {
      method: "GET",
      path: /^\/api\/v1\/app\/info$/,
      app: true,
      answer: () => {
        const { current } = state;
        const app = options.app ?? {};
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
      app: true,
      answer: () =>
        encode(sdkAppStatusSchema, {
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
        }),
    },
    {
      method: "GET",
      path: /^\/api\/v1\/app\/updates$/,
      app: true,
      answer: () =>
        encode(
          sdkUpdatesSchema,
          state.mode.airgap
            ? []
            : state.updates.map((update) => ({
                versionLabel: update.version,
                releaseNotes: update.releaseNotes ?? "",
                createdAt: stamp(update.releaseDate, created),
              })),
          stale(),
        ),
    },
    {
      method: "GET",
      path: /^\/api\/v1\/app\/history$/,
      app: true,
      answer: () =>
        encode(sdkHistorySchema, {
          releases: (state.history ?? [state.current]).map(release),
        }),
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
            channelID: "fake-channel-id",
            channelName: license.channelName ?? "Stable",
            customerID: license.customerId ?? "",
            customerName: license.customerName,
            customerEmail: license.customerEmail ?? "",
            licenseType: license.licenseType ?? "dev",
            endpoint: "https://replicated.app",
            licenseSequence: license.licenseSequence ?? 1,
            isAirgapSupported: true,
            isSupportBundleUploadSupported: true,
            entitlements: licenseFields(),
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
        return encode(sdkLicenseFieldSchema, toWireField(found), stale());
      },
    },
    {
      method: "POST",
      path: /^\/api\/v1\/app\/custom-metrics$/,
      write: "cached",
      answer: (request) =>
        withMetrics(request, (data) => {
          state.customMetrics = data;
        }),
    },
    {
      method: "PATCH",
      path: /^\/api\/v1\/app\/custom-metrics$/,
      write: "cached",
      answer: (request) =>
        withMetrics(request, (data) => {
          state.customMetrics = { ...state.customMetrics, ...data };
        }),
    },
    {
      method: "DELETE",
      path: /^\/api\/v1\/app\/custom-metrics\/([^/]+)$/,
      write: "cached",
      answer: (_request, segment) => {
        const key = decodeSegment(segment);
        state.customMetrics = Object.fromEntries(
          Object.entries(state.customMetrics).filter(([name]) => name !== key),
        );
        return new Response(null, { status: 204 });
      },
    },
    {
      method: "POST",
      path: /^\/api\/v1\/app\/instance-tags$/,
      write: "cached",
      answer: async (request) => {
        const body = await readBody(request);
        const data = isObject(body) ? body.data : undefined;
        if (!isObject(data) || (data.tags !== undefined && !isObject(data.tags))) {
          return text(500, "failed to decode request body");
        }
        const tags = (data.tags ?? {}) as Record<string, unknown>;
        if (Object.values(tags).some((value) => typeof value !== "string")) {
          return text(400, "failed to parse tags: only string values are allowed on instance-tags");
        }
        state.instanceTags = {
          force: data.force === true,
          tags: Object.fromEntries(Object.entries(tags)) as Record<string, string>,
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
          return text(400, "support bundle upload is not available in air gap mode");
        }
        const bytes = await request.arrayBuffer();
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
        answer: async (request) => {
          const body = await readBody(request);
          if (!isObject(body)) return text(400, "invalid request body");
          const data = body.data;
          if (data === undefined || data === null) return text(400, "data is required");
          if (!isObject(data) || Object.values(data).some((value) => typeof value !== "string")) {
            return text(400, "invalid request body");
          }
          const entries = Object.fromEntries(Object.entries(data)) as Record<string, string>;
          state.supportBundleMetadata =
            method === "POST" ? entries : { ...state.supportBundleMetadata, ...entries };
          return json(200, "");
        },
      }),
    ),
    {
      method: "GET",
      path: /^\/api\/v1\/integration\/status$/,
      answer: () => json(200, { isEnabled: state.mode.integrationMode }),
    },
    {
      method: "GET",
      path: /^\/api\/v1\/integration\/mock-data$/,
      answer: () =>
        state.mode.integrationMode
          ? json(200, {
              version: "v2",
              appStatus: { state: state.appStatus.state ?? "ready" },
              currentRelease: z.encode(sdkReleaseSchema, release(state.current)),
              deployedReleases: (state.history ?? [state.current]).map((item) =>
                z.encode(sdkReleaseSchema, release(item)),
              ),
              availableReleases: state.updates.map((update) =>
                z.encode(sdkReleaseSchema, release(update)),
              ),
            })
          : new Response(null, { status: 403 }),
    },
    {
      // Integration mode's editable data: replaces the releases, updates and status at once.
      method: "POST",
      path: /^\/api\/v1\/integration\/mock-data$/,
      answer: async (request) => {
        if (!state.mode.integrationMode) return new Response(null, { status: 403 });
        const decoded = z.safeDecode(mockDataSchema, (await readBody(request)) as never);
        if (!decoded.success) return text(400, z.prettifyError(decoded.error));
        const { currentRelease, deployedReleases, availableReleases, appStatus } = decoded.data;
        const toInit = (item: SdkRelease): FakeSdkRelease => ({
          version: item.versionLabel,
          releaseNotes: item.releaseNotes,
          ...(item.createdAt === undefined ? {} : { releaseDate: item.createdAt.text }),
          ...(item.deployedAt === undefined ? {} : { installDate: item.deployedAt.text }),
        });
        if (currentRelease !== undefined) {
          state.current = { ...state.current, ...toInit(currentRelease) };
        }
        if (deployedReleases !== undefined) state.history = deployedReleases.map(toInit);
        if (availableReleases !== undefined) state.updates = availableReleases.map(toInit);
        if (appStatus !== undefined) {
          const status = typeof appStatus === "string" ? appStatus : appStatus.state;
          state.appStatus = {
            ...state.appStatus,
            ...(status === undefined ? {} : { state: status }),
          };
        }
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
        const { mode, failNext } = decoded.data;
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

  async function withMetrics(
    request: Request,
    store: (data: Record<string, string | number | boolean>) => void,
  ): Promise<Response> {
    const body = await readBody(request);
    if (!isObject(body)) return text(400, "failed to decode request body");
    const data = body.data;
    if (!isObject(data) || Object.keys(data).length === 0) return text(400, "no data provided");
    for (const [key, value] of Object.entries(data)) {
      if (!["string", "number", "boolean"].includes(typeof value)) {
        return text(400, `invalid value for key "${key}": only scalar values are allowed`);
      }
    }
    store(Object.fromEntries(Object.entries(data)) as Record<string, string | number | boolean>);
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
    const answer = route.write === undefined ? await route.answer(request, segment) : await write();
    const headers = new Headers(answer.headers);
    headers.set("access-control-allow-origin", "*");
    if (route.app === true && state.mode.integrationMode) {
      headers.set("x-replicated-mock-data", "true");
    }
    return answer.type === "error"
      ? answer
      : new Response(answer.body, { status: answer.status, headers });

    async function write(): Promise<Response> {
      const isJson = request.method !== "DELETE";
      const text = isJson ? await request.text() : "";
      const body = parse(text);
      const key = `${request.method} ${pathname}${url.search}`;
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
      if (state.mode.readOnly) {
        return json(422, {
          error: "this operation is not allowed in read-only mode",
          readOnlyMode: true,
        });
      }
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

/** POST /api/v1/integration/mock-data: the parts of integration mode's data the fake keeps. */
const mockDataSchema = z.object({
  version: z.optional(z.enum(["v1", "v2"])),
  appStatus: z.optional(z.union([z.string(), z.object({ state: z.optional(z.string()) })])),
  currentRelease: z.optional(sdkReleaseSchema),
  deployedReleases: z.optional(z.array(sdkReleaseSchema)),
  availableReleases: z.optional(z.array(sdkReleaseSchema)),
});

/** POST /mock/v1/control: the fake's own switches. */
const controlSchema = z.object({
  mode: z.optional(
    z.object({
      airgap: z.optional(z.boolean()),
      readOnly: z.optional(z.boolean()),
      integrationMode: z.optional(z.boolean()),
      servedFromCache: z.optional(z.boolean()),
      serviceVersion: z.optional(z.string()),
    }),
  ),
  failNext: z.optional(
    z.object({
      count: z.int().check(z.minimum(1)),
      status: z.optional(z.int().check(z.minimum(400), z.maximum(599))),
    }),
  ),
});

function toWireField(field: FakeSdkLicenseField): SdkLicenseField {
  return {
    name: field.name,
    ...(field.title === undefined ? {} : { title: field.title }),
    ...(field.description === undefined ? {} : { description: field.description }),
    ...(field.value === undefined ? {} : { value: field.value }),
    ...(field.valueType === undefined ? {} : { valueType: field.valueType }),
    ...(field.isHidden === undefined ? {} : { isHidden: field.isHidden }),
    signature: { ...field.signature },
  };
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
