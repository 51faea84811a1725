// The Provisioning API handler: routes a plain-data request, reads its body and answers it
// through the operations, observed; its Web edge is `handler.fetch` (http/fetch-entry.ts).
import { asLogger, type Logger, resolveLogger } from "../internal/logger.ts";
import { createParserInFrontReport, readPatches } from "./body.ts";
import { errorResponse } from "./errors.ts";
import type { ProvisioningHandler, ProvisioningHandlerOptions } from "./handler-options.ts";
import { fromBrowser, withHeaderRecord } from "./headers.ts";
import { resolveBodyLimit } from "./http/body-limit.ts";
import { createFetchEntry } from "./http/fetch-entry.ts";
import { type BodySeen, createHandlerObserver } from "./observe.ts";
import { createOperations } from "./operations.ts";
import { createRouter, normalizeBasePath, operationOf, type Route } from "./routes.ts";
import type { ProvisioningRequest, ProvisioningResponse } from "./types.ts";
import { UnreadableParsedBody } from "./wire.ts";

const notAllowed = (allow: string) =>
  errorResponse("method_not_allowed", `This route accepts ${allow}`, { allow });
const allowPing = notAllowed("GET, HEAD");
const allowUpsert = notAllowed("POST, DELETE");
const allowReset = notAllowed("POST");
const allowDelete = notAllowed("DELETE");
const forbidden = errorResponse("forbidden", "This request is not authorized");
const browserRefused = errorResponse(
  "forbidden",
  "A web browser sent this request (it carries Origin or Sec-Fetch-Site); the Provisioning API answers only the platform, a server. Set allowBrowsers to serve browsers",
);

/**
 * Creates the Provisioning API over a {@link UserStore}.
 *
 * Routes, under `basePath`, with or without a trailing slash: `GET|HEAD /v1/ping` 204 (503 while
 * `store.ready()` is false), `POST /v1/user/create` 201, `POST /v1/user/modify` 204,
 * `DELETE /v1/user/:uuid` 204 (percent-decoded uuid), and, when `reset` or `onReset` opts in,
 * `POST /v1/reset` 204. Other paths 404, other methods 405 with `Allow`; every error has a JSON
 * body `{ error, message }`. Bodies are JSON whatever their content type; requests from web
 * browsers answer 403 unless `allowBrowsers` is set.
 *
 * Create and modify each take one user record or a non-empty array of them, and merge the fields
 * present into the stored user: an absent field keeps its value, `null` clears it, and a duplicate
 * create, a modify of a missing user and a delete of a missing user all succeed, so any message
 * can be delivered again. Lenient fields, so that one odd record never stalls the sync: a
 * documented field that is neither a string nor null is stored as its JSON text, numbers exactly
 * as written (`1.50` stays `"1.50"`), and unknown fields are kept in `extra` under their wire
 * names, `__proto__` included as a plain key. Only what cannot be stored as sent answers 400:
 * invalid JSON, a body that is not an object or a non-empty array of them, a uuid missing, empty
 * or not a string, a value nested deeper than 64 levels, a lone surrogate or U+0000 in a string,
 * a number in `extra` whose text its value would change.
 *
 * Operations on one uuid apply one at a time in arrival order; different uuids run in parallel.
 * Across several replicas of the application, ordering rests on the store's atomic upsert.
 *
 * @throws TypeError for a bad `basePath` or `bodyLimit`, or a reset opted into with nothing to
 * run it (no `onReset` and a store without `reset()`).
 *
 * @example
 * ```ts
 * import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
 *
 * const handler = createProvisioningHandler({ store: new MemoryUserStore() });
 * Bun.serve({ fetch: handler.fetch });
 * ```
 */
export function createProvisioningHandler(
  options: ProvisioningHandlerOptions,
): ProvisioningHandler {
  const { authorize, allowBrowsers = false } = options;
  const basePath = normalizeBasePath(options.basePath);
  const bodyLimit = resolveBodyLimit(options.bodyLimit);
  const servesReset = resetServed(options);
  const router = createRouter(basePath, servesReset);
  const observer = createHandlerObserver(options.store, basePath, options.telemetry);
  const operations = createOperations({
    ...options,
    store: observer.store,
    quarantineStore: options.store,
  });
  const { quarantine } = operations;
  const parserInFront = createParserInFrontReport(resolveLogger(options.logger), options.onError);
  const notFound = errorResponse(
    "not_found",
    `No such route: the Provisioning API serves GET /v1/ping, POST /v1/user/create, POST /v1/user/modify${servesReset ? ", DELETE /v1/user/:uuid and POST /v1/reset" : " and DELETE /v1/user/:uuid"}`,
  );

  /** Every request's one way in, counted and (with OpenTelemetry) traced. */
  function handle(request: ProvisioningRequest): Promise<ProvisioningResponse> {
    const found = router.route(request.path);
    const answer = observer.observe(request, found, (seen) => respond(found, request, seen));
    // A HEAD answer has no body; the status and headers are those GET would have. The body goes
    // after the counters have read its error code.
    return request.method === "HEAD" ? answer.then(withoutBody) : answer;
  }

  /** Refusals, then the guard, then dispatch; `seen` receives a create or modify body's JSON. */
  function respond(
    found: Route | undefined,
    request: ProvisioningRequest,
    seen: BodySeen,
  ): Promise<ProvisioningResponse> {
    if (found === undefined) return Promise.resolve(notFound);
    if (!allowBrowsers && fromBrowser(request.headers)) return Promise.resolve(browserRefused);
    const log = request.logger === undefined ? undefined : asLogger(request.logger);
    return authorize === undefined
      ? dispatch(found, request, log, seen)
      : guarded(found, request, log, seen);
  }

  async function guarded(
    found: Route,
    request: ProvisioningRequest,
    log: Logger | undefined,
    seen: BodySeen,
  ): Promise<ProvisioningResponse> {
    try {
      return (await (authorize as NonNullable<typeof authorize>)(withHeaderRecord(request)))
        ? await dispatch(found, request, log, seen)
        : forbidden;
    } catch (error) {
      return operations.fail(
        error,
        { operation: operationOf(found, request.method), uuid: undefined, status: 500 },
        { headers: request.headers },
        log,
      );
    }
  }

  /** The operation a route and method name; never rejects. `log` is the request's own logger. */
  function dispatch(
    found: Route,
    request: ProvisioningRequest,
    log: Logger | undefined,
    seen: BodySeen,
  ): Promise<ProvisioningResponse> {
    const method = request.method;
    switch (found.name) {
      case "ping":
        return method === "GET" || method === "HEAD"
          ? operations.ping(log)
          : Promise.resolve(allowPing);
      case "create":
      case "modify":
        if (method === "POST") return upsert(request, found.name, log, seen);
        return method === "DELETE"
          ? operations.remove(found.segment, log)
          : Promise.resolve(allowUpsert);
      case "reset":
        return method === "POST" ? operations.reset(log) : Promise.resolve(allowReset);
      case "user":
        return method === "DELETE"
          ? operations.remove(found.segment, log)
          : Promise.resolve(allowDelete);
    }
  }

  function upsert(
    request: ProvisioningRequest,
    operation: "create" | "modify",
    log: Logger | undefined,
    seen: BodySeen,
  ): Promise<ProvisioningResponse> {
    let patches: ReturnType<typeof readPatches>;
    try {
      patches = readPatches(request, bodyLimit, seen);
    } catch (error) {
      return Promise.resolve(
        operations.fail(error, { operation, uuid: undefined, status: 500 }, undefined, log),
      );
    }
    if (Array.isArray(patches)) return operations.upsert(patches, operation, log);
    return Promise.resolve(
      patches instanceof UnreadableParsedBody ? parserInFront(patches, operation) : patches,
    );
  }

  const owns = (path: string) => router.owns(path);
  const fetch = createFetchEntry({ handle, owns, bodyLimit });
  const stats =
    quarantine === undefined
      ? observer.stats
      : () => ({ ...observer.stats(), quarantine: quarantine.stats() });
  return {
    fetch,
    handle,
    owns,
    basePath,
    bodyLimit,
    stats,
    quarantined: () => quarantine?.list() ?? Promise.resolve([]),
    retryQuarantined: () => quarantine?.retry() ?? Promise.resolve({ released: 0, kept: 0 }),
  };
}

/** Whether `POST /v1/reset` is served; a reset opted into with nothing to run it is an error. */
function resetServed(options: ProvisioningHandlerOptions): boolean {
  if (options.reset === false && options.onReset !== undefined) {
    throw new TypeError("reset is false but onReset is set: set reset to true, or drop onReset");
  }
  if (options.onReset !== undefined) return true;
  if (options.reset !== true) return false;
  if (typeof options.store.reset !== "function") {
    throw new TypeError(
      "reset is true but the store has no reset() and there is no onReset: give one of them, or leave reset off",
    );
  }
  return true;
}

function withoutBody(response: ProvisioningResponse): ProvisioningResponse {
  return response.body === undefined ? response : { ...response, body: undefined };
}
