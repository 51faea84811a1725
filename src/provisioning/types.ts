// The plain data that crosses between the parts of the Provisioning API (routing, body reading,
// the operations, the adapters): every other module of the folder imports it, and it imports
// nothing of the folder but the user record, so no import cycle can form through it.
import type { Logger } from "../internal/logger.ts";
import type { UserRecord } from "../users/user-record.ts";

/** Header values by lowercase name, as in Node's `req.headers` or a Web Request's headers. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Headers in any of the forms an adapter has at hand, so that it copies nothing: a
 * {@link HeaderRecord}, a flat `[name, value, ...]` list in any case (Node's `req.rawHeaders`,
 * which Node builds while parsing, while `req.headers` is built on first use), or a Web `Headers`.
 */
export type RequestHeaders = HeaderRecord | readonly string[] | Headers;

/**
 * One request in plain data: what an adapter hands to `ProvisioningHandler.handle`.
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
   * The request's headers ({@link RequestHeaders}). Without `authorize`, only `content-length`,
   * `origin` and `sec-fetch-site` are read.
   */
  headers: RequestHeaders;
  /** The raw body bytes (UTF-8). Read at most `bodyLimit + 1` bytes: more answers 413. */
  body?: Uint8Array | undefined;
  /**
   * The body already parsed by a framework (Express's `express.json()`, a Koa body parser); when
   * set, `body` is ignored. A number in it is kept as its shortest text when that is exact (a
   * safe integer or a decimal); what is not a user record, or an integer past 2^53, is taken for
   * a parser's damage: 500, logged once, never a 400 that would stall the sync.
   */
  json?: unknown;
  /** The peer address of the socket, for `allowAddresses`; never taken from a header. */
  remoteAddress?: string | undefined;
  /**
   * Where a framework mounted the handler, the part of the request's path it stripped before
   * `path` (Express's `req.baseUrl`, a Fastify plugin's prefix, koa-mount's `ctx.mountPath`):
   * `/scim/v2`. Absent at the root and on `fetch`. The Node adapters set it; the SCIM handler
   * puts it in front of its `basePath` in the URLs it answers with (`Location`, `meta.location`).
   */
  mountPath?: string | undefined;
  /**
   * The request's own logger, where the framework has one (Fastify's `request.log`): the
   * handler reports this request's failures there instead of on its `logger`, so that they carry
   * the framework's request id. Taken as the `logger` option is (a pino logger keeps its fields);
   * ignored when it lacks one of the four methods.
   */
  logger?: Logger | undefined;
}

/**
 * The `json` an adapter hands over when something in front of it read the body stream and left no
 * parsed body (the bytes are gone): the core answers 500 and logs, once, how to fix it.
 */
export const bodyReadInFront: unique symbol = Symbol("bodyReadInFront");

/** What an `authorize` guard receives: the request, with its headers always as a record. */
export interface GuardedRequest extends Omit<ProvisioningRequest, "headers"> {
  headers: HeaderRecord;
}

/** A response of the plain-data core; see `ProvisioningHandler.handle`. */
export interface ProvisioningResponse {
  readonly status: number;
  /** Lowercase header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text for errors; undefined for the bodiless 2xx answers. */
  readonly body: string | undefined;
  /**
   * True when the connection must close after this answer: a 413 leaves the rest of the body
   * unread, so the connection cannot carry another request. Every adapter honours it.
   */
  readonly closeConnection?: boolean;
}

/** The five operations of the Provisioning API. */
export type ProvisioningOperation = "ping" | "create" | "modify" | "delete" | "reset";

/**
 * A change that has been stored, given to `onChange`. `deleted` is reported for every acknowledged
 * delete, also when the user was already gone (a redelivery), so that a hook that failed once
 * sees the delete again when the platform retries. `created` is reported for a user the store did
 * not hold, and again for a user whose `created` the hook threw on, until the hook accepts it.
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
