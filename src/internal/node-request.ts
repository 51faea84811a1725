import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { type ProvisioningResponse, payloadTooLarge } from "../provisioning/errors.ts";
import type { ProvisioningHandler, ProvisioningRequest } from "../provisioning/handler.ts";
import { headerOf } from "../provisioning/headers.ts";

/**
 * Builds the core's request from a Node request, for the node:http, Fastify and Koa adapters,
 * which differ only in how they find the path and the parsed body, and how they reply. Calls
 * `ready` with the request, or with undefined when the body exceeds the handler's `bodyLimit`;
 * calls `failed`, when given, if the client goes away before its body is complete. Without
 * `failed`, such a request is dropped: Node destroys its socket and, with no `error` listener,
 * emits nothing. Callbacks rather than a promise: this runs for every message of a sync.
 *
 * `parsed` is what a body parser may have left (Express's `req.body`, Koa's `ctx.request.body`):
 * it is used only when the body stream was already read, so the body is never read twice and a
 * parser that skipped this request (another content type) leaves nothing behind. `stream` is where
 * the body comes from when it is still unread (Fastify hands over its own payload stream).
 */
export function readNodeRequest(
  handler: ProvisioningHandler,
  req: IncomingMessage,
  path: string,
  parsed: unknown,
  stream: Readable,
  ready: (request: ProvisioningRequest | undefined) => void,
  failed?: (error: unknown) => void,
): void {
  const request: ProvisioningRequest = {
    method: req.method ?? "GET",
    path,
    // Node parses rawHeaders eagerly but builds req.headers on first use: spare every request that.
    headers: req.rawHeaders,
    body: undefined,
    json: undefined,
    remoteAddress: req.socket.remoteAddress,
  };
  if (stream.readableEnded) {
    if (parsed instanceof Uint8Array) request.body = parsed;
    else if (typeof parsed === "string") request.body = Buffer.from(parsed);
    else request.json = parsed;
    ready(request);
    return;
  }
  const declaredLength = headerOf(req.rawHeaders, "content-length");
  const limit = handler.bodyLimit;
  if (declaredLength !== undefined && Number(declaredLength) > limit) {
    ready(undefined);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Plain `on` listeners and a size check, no `once` wrappers or removals.
  stream.on("data", (chunk: Buffer) => {
    if (size > limit) return;
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    // Past the limit the stream still drains, so that the 413 can be written and the socket closed.
    else ready(undefined);
  });
  stream.on("end", () => {
    if (size > limit) return;
    request.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    ready(request);
  });
  if (failed !== undefined) stream.on("error", failed);
}

/** {@link readNodeRequest}, then the core's answer (413 for a body too large), as a promise. */
export function answerNodeRequest(
  handler: ProvisioningHandler,
  req: IncomingMessage,
  path: string,
  parsed: unknown,
  stream: Readable = req,
): Promise<ProvisioningResponse> {
  return new Promise((resolve, reject) => {
    readNodeRequest(
      handler,
      req,
      path,
      parsed,
      stream,
      (request) => resolve(request === undefined ? payloadTooLarge : handler.handle(request)),
      reject,
    );
  });
}

/**
 * Writes a core answer on a Node response. A 413 closes the connection: the rest of the oversized
 * body is never read, and the connection cannot carry another request after it.
 */
export function writeNodeResponse(res: ServerResponse, response: ProvisioningResponse): void {
  res.statusCode = response.status;
  const headers = response.headers;
  for (const name in headers) res.setHeader(name, headers[name] as string);
  if (response === payloadTooLarge) res.setHeader("connection", "close");
  res.end(response.body);
}
