// The SCIM server's HTTP side: createScimHandler checks its options, authenticates each request,
// routes it (discovery documents, /Users, the 501 endpoints), reads and bounds the JSON body, and
// turns errors into SCIM error answers (reporting 500 and 503 to onError). The /Users operations
// themselves are in users.ts.
import { type Logger, resolveLogger } from "../internal/logger.ts";
import { trimTrailingSlashes } from "../internal/url.ts";
import type { EdgeAnswers } from "../provisioning/handler-options.ts";
import { headerOf, withHeaderRecord } from "../provisioning/headers.ts";
import { resolveBodyLimit, withinBodyLimit } from "../provisioning/http/body-limit.ts";
import { createFetchEntry } from "../provisioning/http/fetch-entry.ts";
import {
  bodyReadInFront,
  type ProvisioningRequest,
  type ProvisioningResponse,
} from "../provisioning/types.ts";
import { bearerToken, type ScimAuthenticate } from "./auth.ts";
import { badSyntax, ScimError, scimErrorResponse, scimMediaType } from "./errors.ts";
import type { ScimErrorContext, ScimHandler, ScimHandlerOptions } from "./handler-options.ts";
import { placesOf } from "./mounts.ts";
import { parseAttributeList, project } from "./present.ts";
import { type createUserOperations, listsVersion, type ServedUser } from "./users.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });
const unauthorized = new ScimError(
  401,
  "Authorization is missing or invalid: send Authorization: Bearer <token>",
);
const tooLarge = new ScimError(413, "The body exceeds the size limit of this SCIM server");

/** What `fetch` and the adapters answer before the SCIM server reads a request: SCIM errors. */
const edgeAnswers: EdgeAnswers = {
  bodyTooLarge: { ...scimErrorResponse(tooLarge), closeConnection: true },
  invalidJson: scimErrorResponse(badSyntax("The body is not valid JSON")),
  parserTooLarge: scimErrorResponse(
    new ScimError(413, "The body exceeds the size limit of the body parser in front"),
  ),
  unsupportedCharset: scimErrorResponse(new ScimError(415, "Send the body as UTF-8 JSON")),
  unsupportedEncoding: scimErrorResponse(
    new ScimError(415, "This Content-Encoding is not supported"),
  ),
};

/**
 * Creates a SCIM 2.0 server (RFC 7643, RFC 7644) over the same `UserStore` as the
 * Provisioning API, for identity providers that push users: Microsoft Entra ID, Okta, OneLogin.
 *
 * Served under `basePath` (default `/scim/v2`): `GET|POST /Users`, `GET|PUT|PATCH|DELETE
 * /Users/{id}`, `GET /ServiceProviderConfig`, `/ResourceTypes`, `/Schemas`. Groups are not
 * served (the store has none): `/Groups`, `/Bulk` and `/Me` answer 501 and discovery lists the
 * User resource type only. Every answer is `application/scim+json`; errors are SCIM errors with
 * `status` as a string. A user's `id` is the store's uuid, assigned on create. See docs/scim.md
 * for the mapping to the user record and what Entra ID and Okta send.
 *
 * @throws TypeError without `token` or `authenticate` (there is no open default), with both, for
 * a store without `replace` and the reads, or for a bad `basePath`, `baseUrl`, `bodyLimit` or
 * `maxResults`.
 *
 * @example
 * ```ts
 * import { MemoryUserStore } from "platform-integration/provisioning";
 * import { createScimHandler } from "platform-integration/scim";
 *
 * const scim = createScimHandler({ store: new MemoryUserStore(), token: process.env.SCIM_TOKEN! });
 * Bun.serve({ fetch: scim.fetch });
 * ```
 */
export function createScimHandler(options: ScimHandlerOptions): ScimHandler {
  const authenticate = authenticationOf(options);
  if (typeof options.store?.replace !== "function" || typeof options.store.get !== "function") {
    throw new TypeError(
      "createScimHandler: the store needs replace() and the reads (get, list), as the bundled stores have: see UserStore.replace",
    );
  }
  const basePath = trimTrailingSlashes(options.basePath ?? "/scim/v2");
  if (basePath !== "" && !basePath.startsWith("/")) {
    throw new TypeError(`createScimHandler: basePath must start with "/": "${basePath}"`);
  }
  const bodyLimit = resolveBodyLimit(options.bodyLimit);
  const maxResults = options.maxResults ?? 200;
  if (!Number.isSafeInteger(maxResults) || maxResults < 1) {
    throw new TypeError("createScimHandler: maxResults must be a positive integer");
  }
  const baseUrl = options.baseUrl === undefined ? undefined : baseUrlOf(options.baseUrl);
  const logger = resolveLogger(options.logger);
  const placeOf = placesOf(options.store, { basePath, baseUrl, bodyLimit, maxResults });
  const owns = (target: string): boolean => {
    const path = pathOf(target);
    if (basePath === "") return routeOf(path) !== undefined;
    return path === basePath || path.startsWith(`${basePath}/`);
  };

  async function handle(request: ProvisioningRequest): Promise<ProvisioningResponse> {
    const answer = await answerOf(request);
    // HEAD answers GET's status and headers, without a body (errors included).
    return request.method === "HEAD" ? { ...answer, body: undefined } : answer;
  }

  async function answerOf(request: ProvisioningRequest): Promise<ProvisioningResponse> {
    const path = pathOf(request.path);
    const relative =
      basePath === "" ? path : path.startsWith(basePath) ? path.slice(basePath.length) : undefined;
    try {
      if (relative === undefined || (basePath !== "" && !owns(path))) {
        throw new ScimError(404, "No such endpoint");
      }
      let allowed: unknown;
      try {
        allowed = await authenticate(withHeaderRecord(request));
      } catch (error) {
        // A ScimError chooses its answer; anything else is the application's own check failing:
        // a server fault (500), not the store's.
        if (error instanceof ScimError) throw error;
        report(
          error,
          { method: request.method, path: relative, status: 500 },
          logger,
          options.onError,
        );
        return scimErrorResponse(
          new ScimError(500, "The authenticate function failed; the request was not served"),
        );
      }
      // Only `true` lets a request in: a check that returns "false", an object or an array (a
      // JavaScript check's slip) must not open the server.
      if (allowed !== true) {
        return scimErrorResponse(unauthorized, { "www-authenticate": 'Bearer realm="SCIM"' });
      }
      return await route(request, relative);
    } catch (error) {
      return failure(error, request, relative ?? path, options, logger);
    }
  }

  async function route(
    request: ProvisioningRequest,
    relative: string,
  ): Promise<ProvisioningResponse> {
    const { routes, discovery } = placeOf(request);
    const method = request.method === "HEAD" ? "GET" : request.method;
    const query = new URLSearchParams(queryOf(request.path));
    const segments = relative
      .split("/")
      .filter((segment) => segment !== "")
      .map(decodeSegment);
    const [collection, id, more] = segments;
    const allow = (methods: string) => {
      const error = new ScimError(405, `This endpoint accepts ${methods}`);
      return scimErrorResponse(error, { allow: methods });
    };
    switch (collection?.toLowerCase()) {
      case "serviceproviderconfig":
        if (id !== undefined) break;
        return method === "GET" ? json(200, discovery.serviceProviderConfig) : allow("GET");
      case "resourcetypes":
      case "schemas": {
        if (more !== undefined) break;
        if (method !== "GET") return allow("GET");
        const documents =
          collection.toLowerCase() === "schemas" ? discovery.schemas : discovery.resourceTypes;
        if (id === undefined) return json(200, listOf(documents));
        const document = documents.find((item) => item.id === id);
        if (document === undefined)
          throw new ScimError(
            404,
            `No such ${collection.toLowerCase() === "schemas" ? "schema" : "resource type"}`,
          );
        return json(200, document);
      }
      case "users":
        if (more !== undefined) break;
        if (id === ".search")
          throw new ScimError(501, "POST /Users/.search is not supported: filter with GET /Users");
        return id === undefined
          ? usersCollection(routes, request, method, query, allow)
          : oneUser(routes, request, method, id, query, allow);
      case "groups":
        throw new ScimError(
          501,
          "Groups are not supported: the user store has no groups (see /ServiceProviderConfig and /ResourceTypes)",
        );
      case ".search":
        // RFC 7644 §3.4.3 search at the root: not served, as at /Users/.search (a 404 would read
        // as a wrong base URL).
        if (id !== undefined) break;
        throw new ScimError(501, "POST /.search is not supported: filter with GET /Users");
      case "bulk":
        throw new ScimError(501, "Bulk operations are not supported");
      case "me":
        throw new ScimError(501, "/Me is not supported");
    }
    throw new ScimError(404, "No such endpoint");
  }

  const fetch = createFetchEntry({ handle, owns, bodyLimit, edgeAnswers });
  return { fetch, handle, owns, basePath, bodyLimit, edgeAnswers };
}

/** What the /Users routes work over: the user operations and the body size limit. */
interface UserRoutes {
  users: ReturnType<typeof createUserOperations>;
  bodyLimit: number;
}

async function usersCollection(
  context: UserRoutes,
  request: ProvisioningRequest,
  method: string,
  query: URLSearchParams,
  allow: (methods: string) => ProvisioningResponse,
): Promise<ProvisioningResponse> {
  if (method === "GET") {
    const page = await context.users.list(query);
    const attributes = parseAttributeList(query.get("attributes"));
    const excluded = parseAttributeList(query.get("excludedAttributes"));
    return json(200, {
      ...page,
      Resources: page.Resources.map((body) => project(body, attributes, excluded)),
    });
  }
  if (method === "POST") {
    const created = await context.users.create(readBody(request, context.bodyLimit));
    return user(201, created, query, {
      location: (created.body.meta as { location: string }).location,
    });
  }
  return allow("GET, POST");
}

async function oneUser(
  context: UserRoutes,
  request: ProvisioningRequest,
  method: string,
  id: string,
  query: URLSearchParams,
  allow: (methods: string) => ProvisioningResponse,
): Promise<ProvisioningResponse> {
  const ifMatch = headerOf(request.headers, "if-match");
  switch (method) {
    case "GET": {
      const found = await context.users.get(id);
      const ifNoneMatch = headerOf(request.headers, "if-none-match");
      if (ifNoneMatch !== undefined && listsVersion(ifNoneMatch, found.version)) {
        return { status: 304, headers: { etag: found.version }, body: undefined };
      }
      return user(200, found, query);
    }
    case "PUT":
      return user(
        200,
        await context.users.replace(id, readBody(request, context.bodyLimit), ifMatch),
        query,
      );
    case "PATCH":
      return user(
        200,
        await context.users.patch(id, readBody(request, context.bodyLimit), ifMatch),
        query,
      );
    case "DELETE":
      await context.users.remove(id, ifMatch);
      return { status: 204, headers: {}, body: undefined };
  }
  return allow("GET, PUT, PATCH, DELETE");
}

function readBody(request: ProvisioningRequest, bodyLimit: number): unknown {
  if (!withinBodyLimit(request, bodyLimit)) throw tooLarge;
  if (request.json !== undefined) {
    if (request.json === bodyReadInFront) {
      throw new ScimError(
        500,
        "A body parser in front of the SCIM server read the body and left nothing: mount the SCIM server before it",
      );
    }
    return request.json;
  }
  const bytes = request.body;
  if (bytes === undefined || bytes.byteLength === 0) throw badSyntax("The body is empty");
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw badSyntax("The body is not valid JSON in UTF-8");
  }
}

function failure(
  error: unknown,
  request: ProvisioningRequest,
  path: string,
  options: ScimHandlerOptions,
  logger: Logger,
): ProvisioningResponse {
  if (error instanceof ScimError && error.status !== 500) {
    return scimErrorResponse(error, error.status === 413 ? {} : {});
  }
  const status: ScimErrorContext["status"] = error instanceof ScimError ? 500 : 503;
  report(error, { method: request.method, path, status }, logger, options.onError);
  return scimErrorResponse(
    error instanceof ScimError
      ? error
      : new ScimError(503, "The user store failed; nothing may be assumed stored: try again later"),
  );
}

function user(
  status: number,
  found: ServedUser,
  query: URLSearchParams,
  headers: Record<string, string> = {},
): ProvisioningResponse {
  const attributes = parseAttributeList(query.get("attributes"));
  const excluded = parseAttributeList(query.get("excludedAttributes"));
  const etag = { etag: found.version, ...headers };
  // The whole user, as usual: its text is made already (served() serializes it for the ETag).
  if (attributes === undefined && excluded === undefined) return text(status, found.text, etag);
  return json(status, project(found.body, attributes, excluded), etag);
}

function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): ProvisioningResponse {
  return text(status, JSON.stringify(body), headers);
}

/** An answer of JSON text already serialized. */
function text(status: number, body: string, headers: Record<string, string>): ProvisioningResponse {
  return { status, headers: { "content-type": scimMediaType, ...headers }, body };
}

function listOf(resources: readonly object[]) {
  return {
    schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

function authenticationOf(options: ScimHandlerOptions): ScimAuthenticate {
  const { token, authenticate } = options;
  if (token !== undefined && authenticate !== undefined) {
    throw new TypeError("createScimHandler: give token or authenticate, not both");
  }
  if (authenticate !== undefined) {
    if (typeof authenticate !== "function")
      throw new TypeError("createScimHandler: authenticate must be a function");
    return authenticate;
  }
  if (token === undefined) {
    throw new TypeError(
      "createScimHandler needs token (the bearer token your identity provider sends) or authenticate (your own check): a SCIM server is never open",
    );
  }
  return bearerToken(token);
}

function baseUrlOf(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`createScimHandler: baseUrl is not an absolute URL: ${value}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("createScimHandler: baseUrl must be an http(s) URL");
  }
  return `${url.origin}${trimTrailingSlashes(url.pathname)}`;
}

function pathOf(target: string): string {
  const query = target.indexOf("?");
  return trimTrailingSlashes(query === -1 ? target : target.slice(0, query)) || "/";
}

function queryOf(target: string): string {
  const query = target.indexOf("?");
  return query === -1 ? "" : target.slice(query + 1);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ScimError(404, "No such endpoint: a path segment is not valid percent-encoding");
  }
}

const routes = new Set([
  "users",
  ".search",
  "groups",
  "bulk",
  "me",
  "serviceproviderconfig",
  "resourcetypes",
  "schemas",
]);

function routeOf(path: string): string | undefined {
  const first = path.split("/")[1]?.toLowerCase();
  return first !== undefined && routes.has(first) ? first : undefined;
}

function report(
  error: unknown,
  context: ScimErrorContext,
  logger: Logger,
  onError: ScimHandlerOptions["onError"],
): void {
  try {
    if (onError !== undefined) onError(error, context);
    else {
      logger.error(
        `platform-integration: SCIM ${context.method} ${context.path} answered ${context.status}: ${error instanceof Error ? error.message : String(error)}`,
        { status: context.status },
      );
    }
  } catch {
    // A failing onError must not turn the answer into a rejection.
  }
}
