import * as z from "zod/mini";
import {
  createFailureQueue,
  type FailureQueue,
  matchRoutes,
} from "../clients/integration-api/fake-answers.ts";
import {
  defaultServiceVersion,
  type FakeSdkMode,
  goJson,
  goText,
  olderThan,
  parseLenient,
  type SdkFakeRoute,
} from "../clients/sdk-api/fake-answers.ts";
import { jsonEqual } from "../internal/json-equal.ts";

// The router of the newer API's fake: what the service does around every route, whichever
// record it serves. The mode switches, the requests and writes seen, injected failures, an
// older service without the newer routes (404), gorilla/mux's 404 and 405, dev-license-only
// routes (403), read-only refusals (422), the 60-second replay cache of writes, CORS, and the
// fake's own control route. The routes themselves are the client folders' (app/fake*.ts,
// license/fake-sdk-api.ts).

/** A write the fake received, and whether its replay cache answered it. */
export interface FakeSdkWrite {
  method: string;
  path: string;
  /** The JSON body (undefined for a DELETE or a support bundle). */
  body: unknown;
  replayed: boolean;
}

const replayWindowMs = 60_000;

interface Replayed {
  at: number;
  body: unknown;
  status: number;
  answer: string | null;
}

/** The router's state and its `respond`; see the module's header. */
export interface FakeSdkRouter {
  mode(): Readonly<Required<FakeSdkMode>>;
  setMode(mode: FakeSdkMode): void;
  readonly requests: readonly string[];
  readonly writes: readonly FakeSdkWrite[];
  readonly failures: FailureQueue;
  /** Answers `request` from `routes`, as the service would. */
  respond(request: Request): Promise<Response>;
  reset(): void;
}

/** What the router asks of the rest of the fake. */
export interface FakeSdkRouterOptions {
  initialMode: FakeSdkMode;
  now: () => Date;
  routes: () => readonly SdkFakeRoute[];
  /** The license is a development one: dev-only routes answer. */
  devLicense: () => boolean;
}

/** The modes a fake starts with: those given, else the service's defaults. */
function fullMode(given: FakeSdkMode): Required<FakeSdkMode> {
  return {
    airgap: given.airgap ?? false,
    readOnly: given.readOnly ?? false,
    integrationMode: given.integrationMode ?? false,
    helmManaged: given.helmManaged ?? true,
    servedFromCache: given.servedFromCache ?? false,
    serviceVersion: given.serviceVersion ?? defaultServiceVersion,
  };
}

/** Creates the router of a newer API's fake. */
export function createFakeSdkRouter(options: FakeSdkRouterOptions): FakeSdkRouter {
  const { now } = options;
  let mode = fullMode(options.initialMode);
  let requests: string[] = [];
  let writes: FakeSdkWrite[] = [];
  let replay = new Map<string, Replayed>();
  const failures = createFailureQueue();

  const respond = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const { pathname } = url;
    requests.push(`${request.method} ${pathname}`);
    if (pathname === "/healthz") return goJson(200, { version: mode.serviceVersion });
    const matches = matchRoutes(options.routes(), pathname).filter(
      ({ route }) => !olderThan(mode.serviceVersion, route.since),
    );
    // gorilla/mux: 404 text for an unknown path, 405 without CORS headers for another method.
    if (matches.length === 0) return goText(404, "404 page not found");
    const chosen = matches.find(({ route }) => route.method === request.method);
    if (chosen === undefined) return new Response(null, { status: 405 });
    const failure = pathname.startsWith("/mock/") ? undefined : failures.take();
    if (failure !== undefined) {
      if ("networkError" in failure) return Response.error();
      return new Response("injected failure", {
        status: failure.status,
        headers: { "content-type": "text/plain", ...failure.headers },
      });
    }
    const { route, segment } = chosen;
    const answer =
      route.devOnly === true && !options.devLicense()
        ? new Response(null, { status: 403 })
        : route.write === undefined
          ? (refusal(route) ?? (await route.answer(request, segment)))
          : await write(request, url, route, segment);
    const headers = new Headers(answer.headers);
    headers.set("access-control-allow-origin", "*");
    return answer.type === "error"
      ? answer
      : new Response(answer.body, { status: answer.status, headers });
  };

  // Inside the handler, after the replay cache: a refusal is no 2xx, so it is never cached.
  const refusal = (route: SdkFakeRoute): Response | undefined => {
    if (!mode.readOnly || route.refusedReadOnly === undefined) return undefined;
    return goJson(422, { error: route.refusedReadOnly, readOnlyMode: true });
  };

  const write = async (request: Request, url: URL, route: SdkFakeRoute, segment: string) => {
    const { pathname } = url;
    const text = request.method !== "DELETE" ? await request.text() : "";
    const body = parseLenient(text);
    // The service keys on the query as Go encodes it: sorted by name, so order does not matter.
    const query = new URLSearchParams(url.search);
    query.sort();
    const key = `${request.method} ${pathname}?${query}`;
    const at = now().getTime();
    const cached = route.write === "cached" ? replay.get(key) : undefined;
    if (cached !== undefined && at - cached.at < replayWindowMs && jsonEqual(cached.body, body)) {
      writes.push({ method: request.method, path: pathname, body, replayed: true });
      return new Response(cached.answer, {
        status: cached.status,
        headers: {
          "content-type": "application/json",
          "x-replicated-served-from-cache": "true",
          "x-replicated-rate-limited": "true",
        },
      });
    }
    writes.push({ method: request.method, path: pathname, body, replayed: false });
    const refused = refusal(route);
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
      replay.set(key, { at, body, status: answer.status, answer: recorded });
    }
    return answer;
  };

  return {
    mode: () => mode,
    setMode(next) {
      const given = Object.entries(next).filter(([, value]) => value !== undefined);
      mode = { ...mode, ...(Object.fromEntries(given) as FakeSdkMode) };
    },
    get requests() {
      return [...requests];
    },
    get writes() {
      return structuredClone(writes);
    },
    failures,
    respond,
    reset() {
      mode = fullMode(options.initialMode);
      requests = [];
      writes = [];
      replay = new Map();
      failures.clear();
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

/**
 * The fake's own control route (not the service's): switch modes, set the license's type,
 * queue failures.
 */
export function controlRoute(
  router: FakeSdkRouter,
  setLicenseType: (licenseType: string) => void,
): SdkFakeRoute {
  return {
    method: "POST",
    path: "/mock/v1/control",
    answer: async (request) => {
      const body = parseLenient(await request.text());
      const decoded = z.safeDecode(controlSchema, body as never);
      if (!decoded.success) return goText(400, z.prettifyError(decoded.error));
      const { mode, failNext, licenseType } = decoded.data;
      if (licenseType !== undefined) setLicenseType(licenseType);
      if (mode !== undefined) router.setMode(mode as FakeSdkMode);
      if (failNext !== undefined) {
        const { count, status } = failNext;
        router.failures.push(count, status === undefined ? { networkError: true } : { status });
      }
      return goJson(200, { mode: router.mode(), queuedFailures: router.failures.size });
    },
  };
}
