import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSdkApiHandlers } from "../../src/msw/index.ts";
import { createFakeSdkApi, fakeSdkMockDataDefault } from "../../src/testing/index.ts";
import { startMockApi } from "../cli/start-mock-api.ts";

// The newer API's facts (shared/NEWER-API.md, checked against replicated-sdk b5ecbac), as
// requests and the answers the service gives. The same table runs against createFakeSdkApi,
// the msw handlers and `mock-api --api sdk`, so the three fakes cannot drift from the service
// or from each other.

interface Step {
  method: string;
  path: string;
  /** A JSON body (stringified), raw text, or bytes. */
  json?: unknown;
  raw?: string | Uint8Array<ArrayBuffer>;
  status: number;
  /** The parsed JSON body, compared with toEqual (asymmetric matchers allowed). */
  body?: unknown;
  /** A plain-text body. */
  text?: string | RegExp;
  /** No body at all. */
  empty?: true;
  /** Headers that must have these values (null: absent). */
  headers?: Record<string, string | null>;
}

interface Fact {
  fact: string;
  /** Sent to the fake's control route first. */
  control?: { mode?: Record<string, unknown>; licenseType?: string };
  steps: Step[];
}

const readOnly = { mode: { readOnly: true } };
const integration = { mode: { integrationMode: true } };
const readOnly422 = { error: expect.any(String), readOnlyMode: true };
const mockHeader = { "x-replicated-mock-data": "true" };
const flags = {
  isAirgapSupported: expect.any(Boolean),
  isGitOpsSupported: expect.any(Boolean),
  isIdentityServiceSupported: expect.any(Boolean),
  isGeoaxisSupported: expect.any(Boolean),
  isSnapshotSupported: expect.any(Boolean),
  isSupportBundleUploadSupported: expect.any(Boolean),
  isSemverRequired: expect.any(Boolean),
};
const mockRelease = {
  versionLabel: expect.any(String),
  releaseNotes: expect.any(String),
  createdAt: expect.any(String),
  deployedAt: expect.any(String),
  helmReleaseName: expect.any(String),
  helmReleaseRevision: expect.any(Number),
  helmReleaseNamespace: expect.any(String),
  channelID: expect.any(String),
  channelName: expect.any(String),
  channelSequence: expect.any(Number),
  releaseSequence: expect.any(Number),
};
const metrics = "/api/v1/app/custom-metrics";
const tags = "/api/v1/app/instance-tags";
const metadata = "/api/v1/supportbundle/metadata";
const mockData = "/api/v1/integration/mock-data";
const tagTypeError = /not supported, only string values are allowed on instance-tags$/;

const facts: Fact[] = [
  // §1 Read-only mode: which writes are refused, which are taken without being stored.
  {
    fact: 'read-only: POST and PATCH custom metrics are not refused (200 "")',
    control: readOnly,
    steps: [
      { method: "POST", path: metrics, json: { data: { a: 1 } }, status: 200, body: "" },
      { method: "PATCH", path: metrics, json: { data: { b: 2 } }, status: 200, body: "" },
    ],
  },
  {
    fact: "read-only in an air gap: custom metrics are dropped with 200",
    control: { mode: { readOnly: true, airgap: true } },
    steps: [{ method: "POST", path: metrics, json: { data: { a: 1 } }, status: 200, body: "" }],
  },
  {
    fact: "read-only: DELETE of a custom metric answers 422 {error, readOnlyMode: true}",
    control: readOnly,
    steps: [{ method: "DELETE", path: `${metrics}/a`, status: 422, body: readOnly422 }],
  },
  {
    fact: "read-only: instance tags answer 422",
    control: readOnly,
    steps: [
      {
        method: "POST",
        path: tags,
        json: { data: { tags: { a: "b" } } },
        status: 422,
        body: readOnly422,
      },
    ],
  },
  {
    fact: "read-only: support bundle metadata (POST and PATCH) answers 422",
    control: readOnly,
    steps: [
      {
        method: "POST",
        path: metadata,
        json: { data: { a: "b" } },
        status: 422,
        body: readOnly422,
      },
      {
        method: "PATCH",
        path: metadata,
        json: { data: { a: "b" } },
        status: 422,
        body: readOnly422,
      },
    ],
  },
  {
    fact: "read-only: mock data updates answer 422",
    control: { mode: { readOnly: true, integrationMode: true } },
    steps: [
      { method: "POST", path: mockData, json: { version: "v2" }, status: 422, body: readOnly422 },
    ],
  },
  // §2 The replay cache.
  {
    fact: "an identical custom-metrics write within 60 s is replayed, marked so",
    steps: [
      { method: "POST", path: metrics, json: { data: { a: 1 } }, status: 200, body: "" },
      {
        method: "POST",
        path: metrics,
        json: { data: { a: 1 } },
        status: 200,
        body: "",
        headers: { "x-replicated-rate-limited": "true", "x-replicated-served-from-cache": "true" },
      },
    ],
  },
  // §3 Custom metrics.
  {
    fact: 'custom metrics: empty data is 400 "no data provided"; null values and bad JSON 400',
    steps: [
      { method: "POST", path: metrics, json: { data: {} }, status: 400, text: "no data provided" },
      {
        method: "POST",
        path: metrics,
        json: { data: { a: null } },
        status: 400,
        text: /only scalar values are allowed$/,
      },
      { method: "POST", path: metrics, raw: "{", status: 400, empty: true },
      { method: "DELETE", path: `${metrics}/a`, status: 204, empty: true },
    ],
  },
  // §3 Instance tags.
  {
    fact: "instance tags: no data is 200 and empty tags",
    steps: [{ method: "POST", path: tags, json: {}, status: 200, body: "" }],
  },
  {
    fact: "instance tags: a data that is no object, or a tag that is no string, is 400 (not 500)",
    steps: [
      { method: "POST", path: tags, json: { data: "x" }, status: 400, text: tagTypeError },
      { method: "POST", path: tags, json: { data: [] }, status: 400, text: tagTypeError },
      {
        method: "POST",
        path: tags,
        json: { data: { force: "yes" } },
        status: 400,
        text: "string not supported, only string values are allowed on instance-tags",
      },
      {
        method: "POST",
        path: tags,
        json: { data: { tags: { a: 1 } } },
        status: 400,
        text: tagTypeError,
      },
    ],
  },
  {
    fact: "instance tags: a body that is no JSON is 500",
    steps: [{ method: "POST", path: tags, raw: "not json", status: 500 }],
  },
  // §3 Support bundles.
  {
    fact: "support bundle: 0 bytes is 400; bytes are 201 {bundleId, slug}",
    steps: [
      { method: "POST", path: "/api/v1/supportbundle", raw: new Uint8Array(0), status: 400 },
      {
        method: "POST",
        path: "/api/v1/supportbundle",
        raw: new Uint8Array([31, 139, 8]),
        status: 201,
        body: { bundleId: expect.any(String), slug: expect.any(String) },
      },
    ],
  },
  {
    fact: "support bundle: 400 in an air gap",
    control: { mode: { airgap: true } },
    steps: [
      { method: "POST", path: "/api/v1/supportbundle", raw: new Uint8Array([1]), status: 400 },
    ],
  },
  {
    fact: 'support bundle metadata: no data is 400 "data is required"; a non-string 400',
    steps: [
      { method: "POST", path: metadata, json: {}, status: 400, text: "data is required" },
      { method: "POST", path: metadata, raw: "", status: 400, text: "invalid request body" },
      {
        method: "POST",
        path: metadata,
        json: { data: { a: 1 } },
        status: 400,
        text: "invalid request body",
      },
      { method: "PATCH", path: metadata, json: { data: { a: "b" } }, status: 200, body: "" },
    ],
  },
  // §3 License.
  {
    fact: "license info: the seven is* flags, channelID and endpoint; entitlements without name",
    steps: [
      {
        method: "GET",
        path: "/api/v1/license/info",
        status: 200,
        body: expect.objectContaining({
          ...flags,
          channelID: expect.any(String),
          endpoint: expect.any(String),
          entitlements: {
            seat_count: { title: "Seat count", value: 10, valueType: "Integer", signature: {} },
          },
        }),
      },
    ],
  },
  {
    fact: "license fields name each field; an unknown one is 404 with a JSON string",
    steps: [
      {
        method: "GET",
        path: "/api/v1/license/fields",
        status: 200,
        body: {
          seat_count: {
            name: "seat_count",
            title: "Seat count",
            value: 10,
            valueType: "Integer",
            signature: {},
          },
        },
      },
      {
        method: "GET",
        path: "/api/v1/license/fields/nope",
        status: 404,
        body: 'license field "nope" not found',
      },
    ],
  },
  // §3 Integration mode.
  {
    fact: "integration routes answer 403 (empty) to a license that is not a development one",
    control: { licenseType: "prod", mode: { integrationMode: true } },
    steps: [
      { method: "GET", path: "/api/v1/integration/status", status: 403, empty: true },
      { method: "GET", path: mockData, status: 403, empty: true },
      { method: "POST", path: mockData, json: { version: "v2" }, status: 403, empty: true },
      // Integration mode needs a dev license: the app's answers are the cluster's.
      {
        method: "GET",
        path: "/api/v1/app/info",
        status: 200,
        body: expect.anything(),
        headers: { "x-replicated-mock-data": null },
      },
    ],
  },
  {
    fact: "integration mode off (dev license): status {isEnabled:false}, mock data 403",
    steps: [
      {
        method: "GET",
        path: "/api/v1/integration/status",
        status: 200,
        body: { isEnabled: false },
      },
      { method: "GET", path: mockData, status: 403, empty: true },
      {
        method: "GET",
        path: "/api/v1/app/info",
        status: 200,
        body: expect.anything(),
        headers: { "x-replicated-mock-data": null },
      },
    ],
  },
  {
    fact: "integration mode on: the service's default mock data, complete",
    control: integration,
    steps: [
      { method: "GET", path: "/api/v1/integration/status", status: 200, body: { isEnabled: true } },
      {
        method: "GET",
        path: mockData,
        status: 200,
        body: {
          version: "v2",
          appStatus: {
            appSlug: "",
            resourceStates: [
              { kind: "deployment", name: "dev-app", namespace: "default", state: "ready" },
            ],
            updatedAt: "0001-01-01T00:00:00Z",
            state: "ready",
            sequence: 0,
          },
          helmChartURL: "oci://registry.replicated.com/dev-app/dev-channel/dev-parent-chart",
          currentRelease: {
            ...mockRelease,
            versionLabel: "0.1.3-mock-release",
            channelID: "dev-channel",
            channelSequence: 13,
            releaseSequence: 113,
          },
          deployedReleases: [mockRelease, mockRelease, mockRelease],
          availableReleases: [mockRelease, mockRelease],
        },
      },
    ],
  },
  {
    fact: "integration mode on: app info, status, updates and history serve the mock data, marked",
    control: integration,
    steps: [
      {
        method: "GET",
        path: "/api/v1/app/info",
        status: 200,
        headers: mockHeader,
        body: expect.objectContaining({
          appStatus: "ready",
          helmChartURL: "oci://registry.replicated.com/dev-app/dev-channel/dev-parent-chart",
          currentRelease: expect.objectContaining({ versionLabel: "0.1.3-mock-release" }),
          channelID: "dev-channel",
          channelName: "Dev Channel",
          channelSequence: 13,
          releaseSequence: 113,
        }),
      },
      {
        method: "GET",
        path: "/api/v1/app/status",
        status: 200,
        headers: mockHeader,
        body: { appStatus: expect.objectContaining({ state: "ready" }) },
      },
      {
        method: "GET",
        path: "/api/v1/app/updates",
        status: 200,
        headers: mockHeader,
        body: [
          {
            versionLabel: "0.1.4",
            createdAt: "2023-05-24T20:58:07Z",
            releaseNotes: expect.any(String),
          },
          {
            versionLabel: "0.1.5",
            createdAt: "2023-06-01T20:58:07Z",
            releaseNotes: expect.any(String),
          },
        ],
      },
      {
        // The mock data's order (oldest first here), not Helm's newest-first.
        method: "GET",
        path: "/api/v1/app/history",
        status: 200,
        headers: mockHeader,
        body: {
          releases: ["0.1.1", "0.1.2", "0.1.3"].map((versionLabel, index) =>
            expect.objectContaining({ versionLabel, helmReleaseRevision: index + 1 }),
          ),
        },
      },
    ],
  },
  {
    fact: "integration mode in an air gap: updates are [] and not marked",
    control: { mode: { integrationMode: true, airgap: true } },
    steps: [
      {
        method: "GET",
        path: "/api/v1/app/updates",
        status: 200,
        body: [],
        headers: { "x-replicated-mock-data": null },
      },
    ],
  },
  {
    fact: "mock data: v1 has no status object (status 500); an unknown version is 400",
    control: integration,
    steps: [
      { method: "POST", path: mockData, json: { version: "v3" }, status: 400, empty: true },
      { method: "POST", path: mockData, raw: "{", status: 400, empty: true },
      { method: "POST", path: mockData, json: { appStatus: "degraded" }, status: 201, empty: true },
      { method: "GET", path: "/api/v1/app/status", status: 500, empty: true },
      {
        method: "GET",
        path: "/api/v1/app/info",
        status: 200,
        body: expect.objectContaining({ appStatus: "degraded" }),
      },
      { method: "GET", path: mockData, status: 200, body: { appStatus: "degraded" } },
    ],
  },
  // §3 History.
  {
    fact: "history: 400 {} when not Helm-managed; integration mode serves it anyway",
    control: { mode: { helmManaged: false } },
    steps: [{ method: "GET", path: "/api/v1/app/history", status: 400, body: {} }],
  },
  {
    fact: "history in integration mode without Helm: 200",
    control: { mode: { helmManaged: false, integrationMode: true } },
    steps: [{ method: "GET", path: "/api/v1/app/history", status: 200, body: expect.anything() }],
  },
  // Issue 39's fixes, m4: what the attacker found the fakes still got wrong.
  {
    fact: "the replay cache keys on the query as Go encodes it: sorted, so order does not matter",
    steps: [
      { method: "POST", path: `${metrics}?b=1&a=2`, json: { data: { a: 1 } }, status: 200 },
      {
        method: "POST",
        path: `${metrics}?a=2&b=1`,
        json: { data: { a: 1 } },
        status: 200,
        headers: { "x-replicated-rate-limited": "true" },
      },
    ],
  },
  {
    fact: "a metric beyond float64 (1e400) fails Go's decoding: 400 without a body",
    steps: [
      { method: "POST", path: metrics, raw: '{"data":{"x":1e400}}', status: 400, empty: true },
    ],
  },
  {
    fact: "a method a route does not list, OPTIONS included, is 405; /healthz takes any method",
    steps: [
      { method: "PUT", path: metrics, json: { data: { a: 1 } }, status: 405 },
      { method: "OPTIONS", path: "/api/v1/app/info", status: 405 },
      { method: "DELETE", path: "/api/v1/app/instance-tags", status: 405 },
      { method: "POST", path: "/healthz", status: 200, body: { version: expect.any(String) } },
    ],
  },
];

/** How one fake is reached: a fetch for its routes and one for its control route. */
interface Target {
  send(request: Request): Promise<Response>;
  control(request: Request): Promise<Response>;
}

const base = "http://replicated.test:3000";

async function runFact(target: Target, baseUrl: string, { control, steps }: Fact) {
  if (control !== undefined) {
    const answer = await target.control(
      new Request(`${baseUrl}/mock/v1/control`, { method: "POST", body: JSON.stringify(control) }),
    );
    expect(answer.status).toBe(200);
  }
  for (const step of steps) {
    const body = step.json === undefined ? step.raw : JSON.stringify(step.json);
    const response = await target.send(
      new Request(`${baseUrl}${step.path}`, {
        method: step.method,
        ...(body === undefined ? {} : { body }),
      }),
    );
    const text = await response.text();
    const where = `${step.method} ${step.path}`;
    expect(response.status, where).toBe(step.status);
    if (step.body !== undefined) expect(JSON.parse(text), where).toEqual(step.body);
    if (step.text !== undefined) {
      if (typeof step.text === "string") expect(text, where).toBe(step.text);
      else expect(text, where).toMatch(step.text);
    }
    if (step.empty === true) expect(text, where).toBe("");
    for (const [name, value] of Object.entries(step.headers ?? {})) {
      expect(response.headers.get(name), `${where} ${name}`).toBe(value);
    }
  }
}

describe("the newer API's facts: createFakeSdkApi", () => {
  it.each(facts)("$fact", async (fact) => {
    const api = createFakeSdkApi();
    await runFact({ send: api.fetch, control: api.respond }, base, fact);
  });
});

describe("the newer API's facts: the msw handlers", () => {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());

  it.each(facts)("$fact", async (fact) => {
    const { handlers, api } = createSdkApiHandlers({ baseUrl: base });
    server.use(...handlers);
    // The control route is the fake's own, not a handler: reach it in-process.
    await runFact({ send: (request) => fetch(request), control: api.respond }, base, fact);
  });
});

describe("the newer API's facts: mock-api --api sdk", () => {
  it.each(facts)("$fact", async (fact) => {
    const mock = await startMockApi(["--api", "sdk", "--port", "0"]);
    try {
      const send = (request: Request) => fetch(request);
      await runFact({ send, control: send }, mock.baseUrl, fact);
    } finally {
      await mock.stop();
    }
  });
});

describe("createFakeSdkApi: what read-only mode keeps and reports", () => {
  const post = (api: ReturnType<typeof createFakeSdkApi>, method: string, data: unknown) =>
    api.fetch(`${base}${metrics}`, { method, body: JSON.stringify({ data }) });

  it("POST and PATCH are reported but not stored; a PATCH merges with what was stored before", async () => {
    const api = createFakeSdkApi();
    await post(api, "POST", { users: 1, plan: "pro" });
    api.setMode({ readOnly: true });
    await post(api, "PATCH", { users: 2 });
    await post(api, "PATCH", { active: true });
    expect(api.customMetrics).toEqual({ users: 1, plan: "pro" });
    // The second PATCH does not see the first: nothing was stored in between.
    expect(api.reportedCustomMetrics).toEqual([
      { users: 1, plan: "pro" },
      { users: 2, plan: "pro" },
      { users: 1, plan: "pro", active: true },
    ]);
    const refused = await api.fetch(`${base}${metrics}/users`, { method: "DELETE" });
    expect(refused.status).toBe(422);
    expect(api.customMetrics).toEqual({ users: 1, plan: "pro" });
  });

  it("in an air gap a read-only write vanishes; without read-only it goes to the local report", async () => {
    const api = createFakeSdkApi({ airgap: true });
    await post(api, "POST", { users: 1 });
    api.setMode({ readOnly: true });
    expect((await post(api, "POST", { users: 2 })).status).toBe(200);
    expect(api.reportedCustomMetrics).toEqual([{ users: 1 }]);
    expect(api.customMetrics).toEqual({ users: 1 });
  });

  it("instance tags without data are stored as empty; null tag values as empty strings", async () => {
    const api = createFakeSdkApi();
    await api.fetch(`${base}${tags}`, { method: "POST", body: "{}" });
    expect(api.instanceTags).toEqual({ force: false, tags: {} });
    await api.fetch(`${base}${tags}`, {
      method: "POST",
      body: JSON.stringify({ data: { force: true, tags: { name: null } } }),
    });
    expect(api.instanceTags).toEqual({ force: true, tags: { name: "" } });
  });

  it("setMockData() decodes as the service does and refuses what it would answer 400 to", () => {
    const api = createFakeSdkApi({ integrationMode: true });
    expect(api.mockData).toMatchObject(fakeSdkMockDataDefault);
    expect(() => api.setMockData({ version: "v2", appStatus: "ready" })).toThrow(TypeError);
    api.setMockData({ version: "v1", appStatus: "updating" });
    expect(api.mockData).toEqual({ version: "v1", appStatus: "updating" });
  });
});
