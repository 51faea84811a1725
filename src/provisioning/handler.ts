import type { Authorize } from "./authorize.ts";
import {
  errorResponse,
  ProvisioningError,
  type ProvisioningResponse,
  payloadTooLarge,
} from "./errors.ts";
import { type HeaderRecord, headerOf, withHeaderRecord } from "./headers.ts";
import { KeyedLock } from "./keyed-lock.ts";
import type { UserPatch, UserRecord, UserStore } from "./user-store.ts";
import { toPatches } from "./wire.ts";

/**
 * One request in plain data: what an adapter hands to {@link ProvisioningHandler.handle}. Node's
 * `req.rawHeaders` or `req.headers` fits `headers` as it is, so an adapter copies nothing.
 */
export interface ProvisioningRequest {
  /** Upper-case HTTP method. */
  method: string;
  /**
   * The request target relative to where the handler is mounted, percent-encoded as on the wire,
   * query allowed: `/v1/user/a%2Fb`. The handler's `basePath` is stripped from it.
   */
  path: string;
  /**
   * A {@link HeaderRecord}, or a flat `[name, value, ...]` list in any case, as Node's
   * `req.rawHeaders`: Node builds that list while parsing but `req.headers` only on first use, so
   * the list spares every request that work. Without `authorize`, only `content-type` and
   * `content-length` are read.
   */
  headers: HeaderRecord | readonly string[];
  /** The raw body bytes (UTF-8). Read at most `bodyLimit + 1` bytes: more answers 413. */
  body?: Uint8Array | undefined;
  /**
   * The body already parsed as JSON by a framework (Express's `express.json()`, a Koa body
   * parser); when set, `body` is ignored.
   */
  json?: unknown;
  /** The peer address of the socket, for {@link allowAddresses}; never taken from a header. */
  remoteAddress?: string | undefined;
}

/** What an `authorize` guard receives: the request, with its headers always as a record. */
export interface GuardedRequest extends Omit<ProvisioningRequest, "headers"> {
  headers: HeaderRecord;
}

/** The five operations of the Provisioning API. */
export type ProvisioningOperation = "ping" | "create" | "modify" | "delete" | "reset";

/**
 * A change that has been stored, given to `onChange`. `deleted` is reported for every acknowledged
 * delete, also when the user was already gone (a redelivery), so that a hook that failed once
 * sees the delete again when the platform retries.
 */
export type ProvisioningChange =
  | { type: "created" | "updated"; uuid: string; user: UserRecord }
  | { type: "deleted"; uuid: string; user?: undefined }
  | { type: "reset"; uuid?: undefined; user?: undefined };

/** What `onError` learns besides the error. */
export interface ProvisioningErrorContext {
  operation: ProvisioningOperation;
  /** The user concerned, when the operation has one. */
  uuid: string | undefined;
  /** 503 when the store failed (retriable), 500 when a hook or the SDK did. */
  status: 500 | 503;
}

/** Options of {@link createProvisioningHandler}. Only `store` is required. */
export interface ProvisioningHandlerOptions {
  /** Where users are kept: {@link MemoryUserStore} for tests, your database otherwise. */
  store: UserStore;
  /**
   * The path of the platform's `provisioner` URL (`https://host/ldap/auth` gives `/ldap/auth`).
   * Leave it empty when the framework already strips a mount prefix (Express `app.use("/ldap",
   * ...)`, Fastify `prefix`, Hono `mount`). Default `""`.
   */
  basePath?: string;
  /** The largest body accepted, in bytes; larger ones answer 413. Default 1 MiB. */
  bodyLimit?: number;
  /**
   * A guard run before every operation: false answers 403. Off by default, because the platform
   * sends no credentials. See {@link sharedSecret} and {@link allowAddresses}.
   */
  authorize?: Authorize;
  /**
   * Rewrites a patch before it is stored, in the user's turn: hash a clear-text password,
   * drop fields you must not keep. Return the patch to store, with the same uuid.
   */
  transform?: (
    patch: UserPatch,
    context: { operation: "create" | "modify" },
  ) => UserPatch | Promise<UserPatch>;
  /**
   * Runs after each change is stored, in order per user: revoke sessions on `deleted`, write an
   * audit event. If it throws, the request answers 500 and the platform delivers the message again,
   * so the hook runs at least once per change and must tolerate a repeat.
   */
  onChange?: (change: ProvisioningChange) => void | Promise<void>;
  /**
   * Runs on `POST /v1/reset`, instead of `store.reset()`. The platform sends it (when the release
   * sets `identity.enable_reset_request`) after the directory configuration changed, then creates
   * every user again. Without this hook the store's `reset` runs if it has one, else nothing
   * happens. Deleting every user is the simple answer; to keep user data, mark users instead and
   * remove those the re-sync does not create again.
   */
  onReset?: () => void | Promise<void>;
  /**
   * Receives every error that answered 500 or 503, so none is lost. Default: `console.error`.
   * Passwords never appear in the SDK's own errors; your store's errors are passed as they are.
   */
  onError?: (error: unknown, context: ProvisioningErrorContext) => void;
}

/**
 * The Provisioning API, independent of any server. Mount `fetch` where Web Requests are the
 * currency (Bun, Deno, Workers, Hono, Next.js), or use an adapter from `platform-integration/node`,
 * `/fastify` or `/koa`. Every member is bound: pass `handler.fetch` around freely.
 */
export interface ProvisioningHandler {
  /**
   * Answers a Web Request. The optional second argument supplies the peer address for
   * {@link allowAddresses}: `{ remoteAddress }`, or what Bun.serve (the server) and Deno.serve
   * (the connection info) pass to their fetch callback, so `Bun.serve({ fetch: handler.fetch })`
   * and `Deno.serve(handler.fetch)` need no glue.
   */
  fetch(request: Request, context?: unknown): Promise<Response>;
  /**
   * The plain-data core, for adapter authors: method, path, headers and body in; status, headers
   * and body out. It never rejects. An adapter checks {@link ProvisioningHandler.owns} first (to
   * pass other paths on without reading their body), reads the body up to `bodyLimit` (413 past
   * it), calls `handle`, and writes the answer.
   */
  handle(request: ProvisioningRequest): Promise<ProvisioningResponse>;
  /** Whether a request target is one of this API's routes (any method), under `basePath`. */
  owns(path: string): boolean;
  /** The normalized base path: empty, or a leading slash and no trailing one. */
  readonly basePath: string;
  /** The largest body accepted, in bytes. */
  readonly bodyLimit: number;
}

interface Route {
  readonly name: "ping" | "create" | "modify" | "reset" | "user";
  /** The raw last path segment: the uuid of a delete. */
  readonly segment: string;
}

const pingRoute: Route = { name: "ping", segment: "ping" };
const createRoute: Route = { name: "create", segment: "create" };
const modifyRoute: Route = { name: "modify", segment: "modify" };
const resetRoute: Route = { name: "reset", segment: "reset" };
const userPrefix = "/v1/user/";

/** The route of a path relative to the base path; a switch compares without hashing the path. */
function fixedRoute(rest: string): Route | undefined {
  switch (rest) {
    case "/v1/user/create":
      return createRoute;
    case "/v1/user/modify":
      return modifyRoute;
    case "/v1/ping":
      return pingRoute;
    case "/v1/reset":
      return resetRoute;
  }
  return undefined;
}

const created: ProvisioningResponse = { status: 201, headers: {}, body: undefined };
const noContent: ProvisioningResponse = { status: 204, headers: {}, body: undefined };
const notFound = errorResponse(
  "not_found",
  "No such route: the Provisioning API serves GET /v1/ping, POST /v1/user/create, POST /v1/user/modify, DELETE /v1/user/:uuid and POST /v1/reset",
);
const notAllowed = (allow: string) =>
  errorResponse("method_not_allowed", `This route accepts ${allow}`, { allow });
const allowPing = notAllowed("GET, HEAD");
const allowUpsert = notAllowed("POST, DELETE");
const allowReset = notAllowed("POST");
const allowDelete = notAllowed("DELETE");
const forbidden = errorResponse("forbidden", "This request is not authorized");
const notReady = errorResponse("not_ready", "The user store is not ready yet; try again later");
const storeUnavailable = errorResponse(
  "store_unavailable",
  "The user store failed; nothing was acknowledged, send the message again later",
);
const internalError = errorResponse(
  "internal_error",
  "The application failed to process this message",
);
const unsupportedMediaType = errorResponse(
  "unsupported_media_type",
  "Send the user record as application/json",
);
const emptyBody = errorResponse("invalid_json", "The body is empty: send a JSON user record");
const invalidJson = errorResponse("invalid_json", "The body is not valid JSON in UTF-8");
const invalidPathUuid = errorResponse(
  "invalid_uuid",
  "The uuid in the path is not valid percent-encoding",
);

const defaultBodyLimit = 1024 * 1024;
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Creates the Provisioning API over a {@link UserStore}.
 *
 * Routes, under `basePath`, with or without a trailing slash: `GET|HEAD /v1/ping` 204 (503 while
 * `store.ready()` is false), `POST /v1/user/create` 201, `POST /v1/user/modify` 204,
 * `DELETE /v1/user/:uuid` 204 (percent-decoded uuid), `POST /v1/reset` 204. Other paths 404,
 * other methods 405 with `Allow`; every error has a JSON body `{ error, message }`.
 *
 * Create and modify merge the fields present into the stored user: an absent field keeps its
 * value, `null` clears it, and a duplicate create, a modify of a missing user and a delete of a
 * missing user all succeed, so any message can be delivered again. Lenient fields, so that one odd
 * record never stalls the sync: a documented field that is neither a string nor null is stored as
 * its JSON text (`42` becomes `"42"`), and unknown fields are kept in `extra` under their wire
 * names, `__proto__` included as a plain key. Only what cannot be a user answers 400: invalid JSON,
 * a body that is not an object (or, to create several, an array of objects), a uuid missing, empty
 * or not a string, a value nested deeper than 64 levels.
 *
 * Operations on one uuid apply one at a time in arrival order; different uuids run in parallel.
 * Across several replicas of the application, ordering rests on the store's atomic upsert.
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
  const { store, authorize, transform, onChange, onReset } = options;
  const onError = options.onError ?? reportToConsole;
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  if (basePath !== "" && !basePath.startsWith("/")) {
    throw new TypeError(`basePath must start with "/": "${basePath}"`);
  }
  const bodyLimit = options.bodyLimit ?? defaultBodyLimit;
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 0) {
    throw new TypeError("bodyLimit must be a non-negative integer number of bytes");
  }
  const lanes = new KeyedLock();

  function route(path: string): Route | undefined {
    if (!path.startsWith(basePath)) return undefined;
    const query = path.indexOf("?");
    let end = query === -1 ? path.length : query;
    if (path.charCodeAt(end - 1) === 47 /* "/" */) end--;
    const rest = end === path.length && basePath === "" ? path : path.slice(basePath.length, end);
    const fixed = fixedRoute(rest);
    if (fixed !== undefined) return fixed;
    if (rest.length > userPrefix.length && rest.startsWith(userPrefix)) {
      return { name: "user", segment: rest.slice(userPrefix.length) };
    }
    return undefined;
  }

  function fail(error: unknown, context: ProvisioningErrorContext): ProvisioningResponse {
    if (error instanceof ProvisioningError) return errorResponse(error.code, error.message);
    try {
      onError(error, context);
    } catch (hookError) {
      reportToConsole(hookError, context);
    }
    return context.status === 503 ? storeUnavailable : internalError;
  }

  async function ping(): Promise<ProvisioningResponse> {
    try {
      return store.ready === undefined || (await store.ready()) ? noContent : notReady;
    } catch (error) {
      return fail(error, { operation: "ping", uuid: undefined, status: 503 });
    }
  }

  /** The patches a create or modify body carries, or the answer that refuses it. */
  function readPatches(request: ProvisioningRequest): UserPatch[] | ProvisioningResponse {
    const type = headerOf(request.headers, "content-type");
    if (type !== undefined && !isJson(type)) return unsupportedMediaType;
    const declaredLength = headerOf(request.headers, "content-length");
    // Also guards a body a framework parsed with a looser limit than this handler's.
    if (declaredLength !== undefined && Number(declaredLength) > bodyLimit) {
      return payloadTooLarge;
    }
    let body = request.json;
    if (body === undefined) {
      const bytes = request.body;
      if (bytes === undefined || bytes.byteLength === 0) return emptyBody;
      if (bytes.byteLength > bodyLimit) return payloadTooLarge;
      try {
        body = JSON.parse(decoder.decode(bytes));
      } catch {
        return invalidJson;
      }
    }
    const patches = toPatches(body);
    return patches instanceof ProvisioningError
      ? errorResponse(patches.code, patches.message)
      : patches;
  }

  // One function from lock to store to hook, without nested async calls: this is the hot path.
  async function upsert(
    request: ProvisioningRequest,
    operation: "create" | "modify",
  ): Promise<ProvisioningResponse> {
    let patches: UserPatch[] | ProvisioningResponse;
    try {
      patches = readPatches(request);
    } catch (error) {
      return fail(error, { operation, uuid: undefined, status: 500 });
    }
    if (!Array.isArray(patches)) return patches;
    for (let index = 0; index < patches.length; index++) {
      const patch = patches[index] as UserPatch;
      const uuid = patch.uuid;
      const turn = lanes.acquire(uuid);
      if (turn !== undefined) await turn;
      try {
        let change = patch;
        if (transform !== undefined) {
          try {
            change = await transform(patch, { operation });
            // The user's turn is taken by uuid: a transform must not write another user.
            if (change.uuid !== uuid) throw new TypeError("transform changed the uuid of a patch");
          } catch (error) {
            return fail(error, { operation, uuid, status: 500 });
          }
        }
        let result: Awaited<ReturnType<UserStore["upsert"]>>;
        try {
          result = await store.upsert(change);
        } catch (error) {
          return fail(error, { operation, uuid, status: 503 });
        }
        if (onChange !== undefined) {
          try {
            await onChange({
              type: result.created ? "created" : "updated",
              uuid,
              user: result.user,
            });
          } catch (error) {
            return fail(error, { operation, uuid, status: 500 });
          }
        }
      } finally {
        lanes.release(uuid);
      }
    }
    return operation === "create" ? created : noContent;
  }

  async function remove(segment: string): Promise<ProvisioningResponse> {
    let uuid: string;
    try {
      uuid = decodeURIComponent(segment);
    } catch {
      return invalidPathUuid;
    }
    const turn = lanes.acquire(uuid);
    if (turn !== undefined) await turn;
    try {
      return await removeHeld(uuid);
    } finally {
      lanes.release(uuid);
    }
  }

  async function removeHeld(uuid: string): Promise<ProvisioningResponse> {
    try {
      await store.delete(uuid);
    } catch (error) {
      return fail(error, { operation: "delete", uuid, status: 503 });
    }
    try {
      await onChange?.({ type: "deleted", uuid });
    } catch (error) {
      return fail(error, { operation: "delete", uuid, status: 500 });
    }
    return noContent;
  }

  async function reset(): Promise<ProvisioningResponse> {
    try {
      if (onReset !== undefined) await onReset();
      else await store.reset?.();
    } catch (error) {
      return fail(error, {
        operation: "reset",
        uuid: undefined,
        status: onReset === undefined ? 503 : 500,
      });
    }
    try {
      await onChange?.({ type: "reset" });
    } catch (error) {
      return fail(error, { operation: "reset", uuid: undefined, status: 500 });
    }
    return noContent;
  }

  function dispatch(found: Route, request: ProvisioningRequest): Promise<ProvisioningResponse> {
    const method = request.method;
    switch (found.name) {
      case "ping":
        return method === "GET" || method === "HEAD" ? ping() : Promise.resolve(allowPing);
      case "create":
      case "modify":
        if (method === "POST") return upsert(request, found.name);
        return method === "DELETE" ? remove(found.segment) : Promise.resolve(allowUpsert);
      case "reset":
        return method === "POST" ? reset() : Promise.resolve(allowReset);
      case "user":
        return method === "DELETE" ? remove(found.segment) : Promise.resolve(allowDelete);
    }
  }

  function handle(request: ProvisioningRequest): Promise<ProvisioningResponse> {
    const found = route(request.path);
    // The hot path, a create or modify without a guard, goes straight to upsert (which never
    // rejects): one promise fewer for every message of a sync.
    if (
      authorize === undefined &&
      request.method === "POST" &&
      (found?.name === "create" || found?.name === "modify")
    ) {
      return upsert(request, found.name);
    }
    return answer(found, request);
  }

  async function answer(
    found: Route | undefined,
    request: ProvisioningRequest,
  ): Promise<ProvisioningResponse> {
    let response = notFound;
    if (found !== undefined) {
      try {
        response =
          authorize === undefined || (await authorize(withHeaderRecord(request)))
            ? await dispatch(found, request)
            : forbidden;
      } catch (error) {
        response = fail(error, {
          operation: operationOf(found, request.method),
          uuid: undefined,
          status: 500,
        });
      }
    }
    // A HEAD answer has no body; the status and headers are those GET would have.
    return request.method === "HEAD" && response.body !== undefined
      ? { ...response, body: undefined }
      : response;
  }

  async function fetch(request: Request, context?: unknown): Promise<Response> {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const headers = Object.fromEntries(request.headers);
    let body: Uint8Array | undefined;
    let response: ProvisioningResponse | undefined;
    if (request.body !== null && route(path) !== undefined) {
      body = await readWebBody(request.body, headers["content-length"], bodyLimit);
      if (body === undefined) response = payloadTooLarge;
    }
    response ??= await handle({
      method: request.method,
      path,
      headers,
      body,
      remoteAddress: authorize === undefined ? undefined : remoteAddressOf(request, context),
    });
    return new Response(response.body ?? null, {
      status: response.status,
      headers: response.headers,
    });
  }

  return { fetch, handle, owns: (path) => route(path) !== undefined, basePath, bodyLimit };
}

function operationOf(found: Route, method: string): ProvisioningOperation {
  return found.name === "user" || method === "DELETE" ? "delete" : found.name;
}

/** True for `application/json` and `application/*+json`, in any case, with any parameters. */
function isJson(contentType: string): boolean {
  if (contentType === "application/json") return true;
  const semicolon = contentType.indexOf(";");
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase();
  return (
    type === "" ||
    type === "application/json" ||
    (type.startsWith("application/") && type.endsWith("+json"))
  );
}

/** Reads a Web body up to `limit` bytes; undefined when it is (or declares to be) larger. */
async function readWebBody(
  stream: ReadableStream<Uint8Array>,
  declaredLength: string | undefined,
  limit: number,
): Promise<Uint8Array | undefined> {
  if (declaredLength !== undefined && Number(declaredLength) > limit) {
    await stream.cancel();
    return undefined;
  }
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** The peer address from fetch's second argument: explicit, Deno.serve's info, or Bun's server. */
function remoteAddressOf(request: Request, context: unknown): string | undefined {
  if (typeof context !== "object" || context === null) return undefined;
  const given = context as {
    remoteAddress?: unknown;
    remoteAddr?: { hostname?: unknown };
    requestIP?: unknown;
  };
  if (typeof given.remoteAddress === "string") return given.remoteAddress;
  if (typeof given.remoteAddr?.hostname === "string") return given.remoteAddr.hostname;
  if (typeof given.requestIP === "function") {
    const address: unknown = given.requestIP(request)?.address;
    return typeof address === "string" ? address : undefined;
  }
  return undefined;
}

function reportToConsole(error: unknown, context: ProvisioningErrorContext): void {
  console.error(
    `platform-integration: ${context.operation} answered ${context.status}${context.uuid === undefined ? "" : ` for user ${JSON.stringify(context.uuid)}`}:`,
    error,
  );
}
