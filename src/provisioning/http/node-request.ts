// The Provisioning API's Node edge: a Node request read into the core's plain-data request, and the
// core's answer written on a Node response. The node:http (Express), Fastify and Koa adapters are
// each a page on top of it. It sits in the core beside the Web edge (fetch-entry.ts) so that both
// edges read bodies through the one body limit; only the Node adapters import it, so
// `./provisioning` does not carry it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { Logger } from "../../internal/logger.ts";
import type { ServedHandler } from "../handler-options.ts";
import { headerOf } from "../headers.ts";
import { bodyReadInFront, type ProvisioningRequest, type ProvisioningResponse } from "../types.ts";
import { payloadTooLarge, readNodeBody } from "./body-limit.ts";

/**
 * Builds the core's request from a Node request, for the node:http, Fastify and Koa adapters,
 * which differ only in how they find the path and the parsed body, and how they reply. Calls
 * `ready` with the request, or with undefined when the body exceeds the handler's `bodyLimit`;
 * calls `failed`, when given, if the client goes away before its body is complete (see
 * {@link readNodeBody}).
 *
 * `parsed` is what a body parser may have left (Express's `req.body`, Koa's `ctx.request.body`):
 * it is used only when the body stream was already read, so the body is never read twice and a
 * parser that skipped this request (another content type) leaves nothing behind. `stream` is where
 * the body comes from when it is still unread (Fastify hands over its own payload stream).
 */
export function readNodeRequest(
  handler: ServedHandler,
  req: IncomingMessage,
  path: string,
  parsed: unknown,
  stream: Readable,
  ready: (request: ProvisioningRequest | undefined) => void,
  failed?: (error: unknown) => void,
): void {
  const request = new NodeRequest(req, path);
  if (stream.readableEnded) {
    if (parsed instanceof Uint8Array) request.body = parsed;
    else if (typeof parsed === "string") request.body = Buffer.from(parsed);
    // Read by something in front that left nothing: the core answers 500 and says why, once.
    else request.json = parsed === undefined ? bodyReadInFront : parsed;
    ready(request);
    return;
  }
  readNodeBody(
    stream,
    headerOf(req.rawHeaders, "content-length"),
    handler.bodyLimit,
    (body) => {
      if (body === undefined) {
        ready(undefined);
        return;
      }
      request.body = body;
      ready(request);
    },
    failed,
  );
}

/**
 * The core's request for a Node request. The peer address is looked up when it is read (by
 * `allowAddresses`, or a span), not for every message: the socket's getter costs a call into
 * net's internals on each request that reads it.
 */
class NodeRequest implements ProvisioningRequest {
  // Declared only: set in the constructor or by the reader, which keeps the adapters' bundles small.
  declare readonly method: string;
  declare readonly path: string;
  declare readonly headers: readonly string[];
  declare body?: Uint8Array | undefined;
  declare json?: unknown;
  declare logger?: Logger | undefined;
  readonly #req: IncomingMessage;

  constructor(req: IncomingMessage, path: string) {
    this.method = req.method ?? "GET";
    this.path = path;
    // Node parses rawHeaders eagerly but builds req.headers on first use: spare every request that.
    this.headers = req.rawHeaders;
    this.#req = req;
  }

  get remoteAddress(): string | undefined {
    return this.#req.socket?.remoteAddress;
  }
}

/**
 * {@link readNodeRequest}, then the core's answer (413 for a body too large), as a promise.
 * `logger` is the framework's per-request logger, when it has one; `mountPath` where the
 * framework mounted the handler (see `ProvisioningRequest.mountPath`).
 */
export function answerNodeRequest(
  handler: ServedHandler,
  req: IncomingMessage,
  path: string,
  parsed: unknown,
  stream: Readable = req,
  logger?: Logger,
  mountPath?: string,
): Promise<ProvisioningResponse> {
  return new Promise((resolve, reject) => {
    readNodeRequest(
      handler,
      req,
      path,
      parsed,
      stream,
      (request) => {
        if (request === undefined)
          return resolve(handler.edgeAnswers?.bodyTooLarge ?? payloadTooLarge);
        if (logger !== undefined) request.logger = logger;
        if (mountPath !== undefined && mountPath !== "") request.mountPath = mountPath;
        resolve(handler.handle(request));
      },
      reject,
    );
  });
}

/** Writes a core answer on a Node response, closing the connection when the answer says so. */
export function writeNodeResponse(res: ServerResponse, response: ProvisioningResponse): void {
  res.statusCode = response.status;
  const headers = response.headers;
  for (const name in headers) res.setHeader(name, headers[name] as string);
  if (response.closeConnection) res.setHeader("connection", "close");
  res.end(response.body);
}
