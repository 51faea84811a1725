import type { FakeSdkRelease, FakeSdkUpdate } from "../clients/app/fake.ts";
import { createFakeSdkApp, type FakeSdkAppOptions } from "../clients/app/fake.ts";
import { createFakeMockData, type FakeSdkMockData } from "../clients/app/fake-mock-data.ts";
import { createFakeSdkWrites, type FakeSupportBundle } from "../clients/app/fake-writes.ts";
import { type FakeFailure, fetchThrough } from "../clients/integration-api/fake-answers.ts";
import { createFakeSdkLicense, type FakeSdkLicense } from "../clients/license/fake-sdk-api.ts";
import type { FakeSdkMode, SdkFakeContext } from "../clients/sdk-api/fake-answers.ts";
import { controlRoute, createFakeSdkRouter, type FakeSdkWrite } from "./fake-sdk-router.ts";

// The fake of the platform's newer in-cluster API: each client folder's part (the app's
// answers, integration mode's mock data and the writes in app/, the license in license/)
// composed behind the router that plays the service (fake-sdk-router.ts). This module owns the
// public face only: the options, the `FakeSdkApi` interface and the composition.

export type {
  FakeSdkAppOptions,
  FakeSdkRelease,
  FakeSdkUpdate,
} from "../clients/app/fake.ts";
export {
  type FakeSdkMockAppStatus,
  type FakeSdkMockData,
  type FakeSdkMockRelease,
  fakeSdkMockDataDefault,
} from "../clients/app/fake-mock-data.ts";
export type { FakeSupportBundle } from "../clients/app/fake-writes.ts";
export {
  type FakeSdkLicense,
  type FakeSdkLicenseField,
  fakeSdkLicenseDefault,
} from "../clients/license/fake-sdk-api.ts";
export type { FakeSdkMode } from "../clients/sdk-api/fake-answers.ts";
export type { FakeSdkWrite } from "./fake-sdk-router.ts";

/** The fake's starting state; see {@link createFakeSdkApi}. */
export interface FakeSdkApiOptions extends FakeSdkMode, FakeSdkAppOptions {
  /** The license (default: `fakeSdkLicenseDefault`). */
  license?: FakeSdkLicense;
  /** Integration mode's mock data (default: the service's own, `fakeSdkMockDataDefault`). */
  mockData?: FakeSdkMockData;
  /** The clock, for dates and for the 60-second replay cache. */
  now?: () => Date;
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
  return buildFakeSdkApi(options).api;
}

/**
 * {@link createFakeSdkApi}, with the paths of the service's routes (its own `/healthz`
 * included, the fake's control route not): the msw handlers are built from them. Internal: not
 * exported by `platform-integration/testing`.
 */
export function buildFakeSdkApi(options: FakeSdkApiOptions = {}): {
  api: FakeSdkApi;
  servicePaths: readonly string[];
} {
  const now = options.now ?? (() => new Date());
  const context: SdkFakeContext = {
    now,
    created: now(),
    mode: () => router.mode(),
    license: () => license.facts(),
  };
  const license = createFakeSdkLicense(context, options.license);
  const mockData = createFakeMockData(context, options.mockData);
  const app = createFakeSdkApp(context, options, mockData.current);
  const writes = createFakeSdkWrites(context);
  const router = createFakeSdkRouter({
    initialMode: options,
    now,
    routes: () => routes,
    devLicense: () => license.facts().development,
  });
  const parts = [app, license, writes, mockData];
  const serviceRoutes = parts.flatMap((part) => part.routes);
  const routes = [...serviceRoutes, controlRoute(router, license.setType)];
  const servicePaths = [...new Set(["/healthz", ...serviceRoutes.map(({ path }) => path)])];

  const api: FakeSdkApi = {
    respond: router.respond,
    fetch: fetchThrough(router.respond),
    get requests() {
      return router.requests;
    },
    get writes() {
      return router.writes;
    },
    get customMetrics() {
      return writes.customMetrics;
    },
    get reportedCustomMetrics() {
      return writes.reportedCustomMetrics;
    },
    get mockData() {
      return mockData.current();
    },
    get instanceTags() {
      return writes.instanceTags;
    },
    get supportBundles() {
      return writes.supportBundles;
    },
    get supportBundleMetadata() {
      return writes.supportBundleMetadata;
    },
    get mode() {
      return { ...router.mode() };
    },
    setMode: router.setMode,
    setCurrent: (current) => app.set({ current }),
    setUpdates: (updates) => app.set({ updates }),
    setHistory: (history) => app.set({ history }),
    setAppStatus: (appStatus) => app.set({ appStatus }),
    setLicense: license.set,
    setMockData: mockData.set,
    failNext: router.failures.push,
    reset() {
      router.reset();
      for (const part of parts) part.reset();
    },
  };
  return { api, servicePaths };
}
