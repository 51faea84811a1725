// Observation of the handler: the health counters on every answer, and, when OpenTelemetry is
// installed, a SERVER span per request (HTTP semantic conventions), the operation counter, the
// request duration and the store's latency. Without OpenTelemetry a request pays the counters and
// one check.
import {
  endHttpSpan,
  errorType,
  lazyInstruments,
  type OpenTelemetryApi,
  scopeOf,
  withSpan,
} from "../internal/telemetry.ts";
import type { UserStore } from "../users/user-store.ts";
import { operationOf, type Route } from "./routes.ts";
import { type CountedOperation, createStatsCounter, type ProvisioningStats } from "./stats.ts";
import type { ProvisioningRequest, ProvisioningResponse } from "./types.ts";

/** The handler's `telemetry` option. */
export interface ProvisioningTelemetryOptions {
  /**
   * Records the users' uuids on spans, as `user.id` (and unredacted in `url.path` of a delete).
   * Off by default: a uuid identifies a person in your directory. Default `false`.
   */
  includeUuid?: boolean | undefined;
}

/**
 * Where the handler hands the JSON it parsed from a create or modify body: given to `run` only
 * when a span records `user.id` (`includeUuid`), so that no other request pays for keeping it.
 */
export type BodySeen = ((json: unknown) => void) | undefined;

export interface HandlerObserver {
  /**
   * Answers a request through `run`, counting it, in a span when OpenTelemetry is there; `run`
   * receives where to hand the body it parses, when the span wants it.
   */
  observe(
    request: ProvisioningRequest,
    found: Route | undefined,
    run: (seen: BodySeen) => Promise<ProvisioningResponse>,
  ): Promise<ProvisioningResponse>;
  stats(): ProvisioningStats;
  /** The store, its calls timed into a histogram when OpenTelemetry is there. */
  store: UserStore;
}

const routeTemplates: Record<Route["name"], string> = {
  ping: "/v1/ping",
  create: "/v1/user/create",
  modify: "/v1/user/modify",
  reset: "/v1/reset",
  user: "/v1/user/{uuid}",
};

export function createHandlerObserver(
  store: UserStore,
  basePath: string,
  options: ProvisioningTelemetryOptions = {},
): HandlerObserver {
  const counter = createStatsCounter();
  const includeUuid = options.includeUuid === true;
  const instruments = lazyInstruments((api: OpenTelemetryApi) => {
    const { tracer, meter } = scopeOf(api);
    const seconds = {
      unit: "s",
      advice: {
        explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      },
    };
    return {
      api,
      tracer,
      operations: meter.createCounter("platform_integration.provisioning.operations", {
        description: "Provisioning API requests answered, by operation and status code.",
        unit: "{request}",
      }),
      duration: meter.createHistogram("http.server.request.duration", {
        description: "Duration of the Provisioning API's requests.",
        ...seconds,
      }),
      storeDuration: meter.createHistogram("platform_integration.provisioning.store.duration", {
        description: "Duration of the user store's calls, by method.",
        ...seconds,
      }),
    };
  });

  // The instruments as the latest request found them: a store call belongs to a request, and
  // looking the providers up again for it would double that cost on every create.
  let requestTools: ReturnType<typeof instruments>;

  function observe(
    request: ProvisioningRequest,
    found: Route | undefined,
    run: (seen: BodySeen) => Promise<ProvisioningResponse>,
  ): Promise<ProvisioningResponse> {
    counter.start();
    const operation = countedOperation(found, request.method);
    const tools = instruments();
    requestTools = tools;
    if (tools === undefined) {
      return run(undefined).then((response) => {
        counter.finish(operation, response);
        return response;
      });
    }
    const { api, tracer } = tools;
    const route = found === undefined ? undefined : `${basePath}${routeTemplates[found.name]}`;
    const attributes = {
      "http.request.method": request.method,
      "url.path": includeUuid || found?.name !== "user" ? pathOf(request.path) : route,
      "platform_integration.provisioning.operation": operation,
      ...(route === undefined ? {} : { "http.route": route }),
      ...(request.remoteAddress === undefined ? {} : { "client.address": request.remoteAddress }),
    };
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: api.SpanKind.SERVER,
        attributes,
      },
    );
    const started = performance.now();
    // The JSON the handler parsed from the body, for the span's user.id: read once it has parsed
    // it, rather than parsing the body a second time.
    let parsed: unknown;
    const seen: BodySeen = includeUuid
      ? (json) => {
          parsed = json;
        }
      : undefined;
    return withSpan(api, span, () => run(seen)).then((response) => {
      counter.finish(operation, response);
      if (includeUuid) span.setAttributes(uuidAttribute(request, found, parsed));
      endHttpSpan(api, span, "server", { status: response.status });
      const status = response.status;
      tools.operations.add(1, {
        "platform_integration.provisioning.operation": operation,
        "http.response.status_code": status,
      });
      tools.duration.record((performance.now() - started) / 1000, {
        "http.request.method": request.method,
        "http.response.status_code": status,
        ...(route === undefined ? {} : { "http.route": route }),
        ...(status >= 500 ? { "error.type": String(status) } : {}),
      });
      return response;
    });
  }

  /** Times one store call (OpenTelemetry is there: `tools`). */
  function timed<T>(
    tools: NonNullable<typeof requestTools>,
    method: string,
    call: () => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    const record = (error?: unknown) =>
      tools.storeDuration.record((performance.now() - started) / 1000, {
        "platform_integration.store.method": method,
        ...(error === undefined ? {} : { "error.type": errorType(undefined, error) }),
      });
    return call().then(
      (value) => {
        record();
        return value;
      },
      (error: unknown) => {
        record(error);
        throw error;
      },
    );
  }

  /** A call off the hot path, timed when OpenTelemetry is there. */
  function rare<T>(method: string, call: () => Promise<T>): Promise<T> {
    const tools = requestTools;
    return tools === undefined ? call() : timed(tools, method, call);
  }

  // Without OpenTelemetry, a write goes straight to the store: no closure for the timing.
  const { ready, reset } = store;
  const timedStore: UserStore = {
    upsert: (patch) => {
      const tools = requestTools;
      return tools === undefined
        ? store.upsert(patch)
        : timed(tools, "upsert", () => store.upsert(patch));
    },
    delete: (uuid) => {
      const tools = requestTools;
      return tools === undefined
        ? store.delete(uuid)
        : timed(tools, "delete", () => store.delete(uuid));
    },
    ...(ready === undefined ? {} : { ready: () => rare("ready", async () => ready.call(store)) }),
    ...(reset === undefined ? {} : { reset: () => rare("reset", () => reset.call(store)) }),
  };

  return { observe, stats: counter.snapshot, store: timedStore };
}

function countedOperation(found: Route | undefined, method: string): CountedOperation {
  return found === undefined ? "other" : operationOf(found, method);
}

function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

/**
 * The uuid(s) a request names: the path's for a delete; for create and modify, the body's as the
 * handler read it (a framework's parsed body, else `parsed`, the JSON it parsed), none when it
 * read none.
 */
function uuidAttribute(request: ProvisioningRequest, found: Route | undefined, parsed: unknown) {
  let uuids: string[] = [];
  if (found?.name === "user") {
    try {
      uuids = [decodeURIComponent(found.segment)];
    } catch {}
  } else if (found?.name === "create" || found?.name === "modify") {
    const body = request.json ?? parsed;
    uuids = (Array.isArray(body) ? body : [body])
      .map((user) => (user as { uuid?: unknown } | null)?.uuid)
      .filter((uuid): uuid is string => typeof uuid === "string");
  }
  if (uuids.length === 0) return {};
  return { "user.id": uuids.length === 1 ? (uuids[0] as string) : uuids };
}
