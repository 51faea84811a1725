import { decodeSegment } from "../integration-api/fake-answers.ts";
import {
  encoded,
  goJson,
  goText,
  invalidJson,
  isObject,
  parseStrict,
  type SdkFakeContext,
  type SdkFakeRoute,
} from "../sdk-api/fake-answers.ts";
import { sdkSupportBundleSchema } from "../sdk-api/sdk-schemas.ts";

// The writes of the newer API's fake: custom metrics (POST replaces, PATCH merges, DELETE, and
// what the service reports upstream), instance tags, support bundles and their metadata, with
// the service's answers to bodies Go cannot decode. The router (src/testing/fake-sdk-router.ts)
// adds the replay cache and read-only refusals the routes declare.

/** A support bundle the fake accepted. */
export interface FakeSupportBundle {
  bundleId: string;
  slug: string;
  contentType: string;
  size: number;
}

type Metrics = Record<string, string | number | boolean>;

/** The writes' state, as the fake's getters show it. */
export interface FakeSdkWrites {
  routes: SdkFakeRoute[];
  readonly customMetrics: Readonly<Metrics>;
  readonly reportedCustomMetrics: readonly Readonly<Metrics>[];
  readonly instanceTags: { force: boolean; tags: Record<string, string> } | undefined;
  readonly supportBundles: readonly FakeSupportBundle[];
  readonly supportBundleMetadata: Readonly<Record<string, string>>;
  reset(): void;
}

/** The writes' part of the newer API's fake: their routes and what they stored. */
export function createFakeSdkWrites(context: SdkFakeContext): FakeSdkWrites {
  let customMetrics: Metrics = {};
  let reported: Metrics[] = [];
  let instanceTags: { force: boolean; tags: Record<string, string> } | undefined;
  let supportBundles: FakeSupportBundle[] = [];
  let supportBundleMetadata: Record<string, string> = {};

  /** A full set of custom metrics goes upstream (air gap: to the local report) unless both. */
  const report = (metrics: Metrics) => {
    const { airgap, readOnly } = context.mode();
    if (!(airgap && readOnly)) reported.push({ ...metrics });
  };

  /**
   * POST/PATCH custom metrics: Go decodes `{"data":{…}}`, refuses empty data and null, array or
   * object values, merges, and reports the result; read-only mode skips only the local save.
   */
  const withMetrics = async (request: Request, merge: (data: Metrics) => Metrics) => {
    const data = await readMetrics(request);
    if (data instanceof Response) return data;
    const merged = merge(data);
    if (!context.mode().readOnly) customMetrics = merged;
    report(merged);
    return goJson(200, "");
  };

  const routes: SdkFakeRoute[] = [
    ...(["POST", "PATCH"] as const).map(
      (method): SdkFakeRoute => ({
        method,
        path: "/api/v1/app/custom-metrics",
        write: "cached",
        // Not refused in read-only mode: the service skips its local save and still reports.
        answer: (request) =>
          withMetrics(request, (data) =>
            method === "POST" ? data : { ...customMetrics, ...data },
          ),
      }),
    ),
    {
      method: "DELETE",
      path: "/api/v1/app/custom-metrics/:key",
      write: "cached",
      refusedReadOnly: "custom metrics delete is unavailable in read-only mode",
      answer: (_request, segment) => {
        const key = decodeSegment(segment);
        customMetrics = Object.fromEntries(
          Object.entries(customMetrics).filter(([name]) => name !== key),
        );
        report(customMetrics);
        return new Response(null, { status: 204 });
      },
    },
    {
      method: "POST",
      path: "/api/v1/app/instance-tags",
      write: "cached",
      refusedReadOnly: "instance tags are unavailable in read-only mode",
      answer: async (request) => {
        const tags = await readInstanceTags(request);
        if (tags instanceof Response) return tags;
        instanceTags = tags;
        return goJson(200, "");
      },
    },
    {
      method: "POST",
      path: "/api/v1/supportbundle",
      since: "1.17.0",
      answer: async (request) => {
        if (context.mode().airgap) {
          return goText(400, "support bundle upload is not available in airgap mode");
        }
        const bytes = await request.arrayBuffer();
        // The service refuses a Content-Length of 0 (or none): an empty bundle never uploads.
        if (bytes.byteLength === 0) return goText(400, "Content-Length header is required");
        const bundle = {
          bundleId: `bundle-${supportBundles.length + 1}`,
          slug: `fake-bundle-${supportBundles.length + 1}`,
        };
        supportBundles.push({
          ...bundle,
          contentType: request.headers.get("content-type") ?? "",
          size: bytes.byteLength,
        });
        return encoded(sdkSupportBundleSchema, bundle, {}, 201);
      },
    },
    ...(["POST", "PATCH"] as const).map(
      (method): SdkFakeRoute => ({
        method,
        path: "/api/v1/supportbundle/metadata",
        since: "1.18.0",
        write: "uncached",
        refusedReadOnly: "support bundle metadata is unavailable in read-only mode",
        answer: async (request) => {
          const entries = await readMetadata(request);
          if (entries instanceof Response) return entries;
          supportBundleMetadata =
            method === "POST" ? entries : { ...supportBundleMetadata, ...entries };
          return goJson(200, "");
        },
      }),
    ),
  ];

  return {
    routes,
    get customMetrics() {
      return { ...customMetrics };
    },
    get reportedCustomMetrics() {
      return structuredClone(reported);
    },
    get instanceTags() {
      return structuredClone(instanceTags);
    },
    get supportBundles() {
      return structuredClone(supportBundles);
    },
    get supportBundleMetadata() {
      return { ...supportBundleMetadata };
    },
    reset() {
      customMetrics = {};
      reported = [];
      instanceTags = undefined;
      supportBundles = [];
      supportBundleMetadata = {};
    },
  };
}

/**
 * The metrics of a POST or PATCH, or the service's answer: a value of another type, or no JSON,
 * is a 400 without a body; empty data, and null, array or object values, a 400 that says why.
 */
async function readMetrics(request: Request): Promise<Metrics | Response> {
  const body = parseStrict(await request.text());
  if (body === invalidJson || (body !== null && !isObject(body))) {
    return new Response(null, { status: 400 });
  }
  const data = body?.data ?? null;
  if (data !== null && !isObject(data)) return new Response(null, { status: 400 });
  if (data === null || Object.keys(data).length === 0) return goText(400, "no data provided");
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
      return goText(400, `${key} value is ${kind}, only scalar values are allowed`);
    }
  }
  return Object.fromEntries(Object.entries(data)) as Metrics;
}

/**
 * The instance tags of a POST, or the service's answer. Go decodes into
 * {data:{force bool, tags map[string]string}}: a value of another type is a 400 naming its JSON
 * type; a body that is no JSON at all is a 500.
 */
async function readInstanceTags(
  request: Request,
): Promise<{ force: boolean; tags: Record<string, string> } | Response> {
  const body = parseStrict(await request.text());
  if (body === invalidJson) return new Response(null, { status: 500 });
  const wrongType = instanceTagsTypeError(body);
  if (wrongType !== undefined) {
    return goText(
      400,
      `${wrongType} not supported, only string values are allowed on instance-tags`,
    );
  }
  const data = isObject(body) && isObject(body.data) ? body.data : {};
  const tags = isObject(data.tags) ? data.tags : {};
  return {
    force: data.force === true,
    tags: Object.fromEntries(
      Object.entries(tags).map(([name, value]) => [name, value ?? ""]),
    ) as Record<string, string>,
  };
}

/** The support bundle metadata of a POST or PATCH: string (or null) values, or a 400. */
async function readMetadata(request: Request): Promise<Record<string, string> | Response> {
  const body = parseStrict(await request.text());
  if (body === invalidJson || (body !== null && !isObject(body))) {
    return goText(400, "invalid request body");
  }
  const data = body?.data;
  if (data === undefined || data === null) return goText(400, "data is required");
  if (
    !isObject(data) ||
    Object.values(data).some((value) => typeof value !== "string" && value !== null)
  ) {
    return goText(400, "invalid request body");
  }
  return Object.fromEntries(
    Object.entries(data).map(([name, value]) => [name, value ?? ""]),
  ) as Record<string, string>;
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
