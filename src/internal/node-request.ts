import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { type ProvisioningResponse, payloadTooLarge } from "../provisioning/errors.ts";
import type { ProvisioningHandler, ProvisioningRequest } from "../provisioning/handler.ts";

/**
 * Answers one Node request with the handler's core: shared by the node:http, Fastify and Koa
 * adapters, which differ only in how they find the path, the parsed body and how they reply.
 *
 * `parsed` is what a body parser may have left (Express's `req.body`, Koa's `ctx.request.body`):
 * it is used only when the body stream was already read, so the body is never read twice and a
 * parser that skipped this request (another content type) leaves nothing behind. `stream` is where
 * the body comes from when it is still unread (Fastify hands over its own payload stream).
 */
export async function answerNodeRequest(
  handler: ProvisioningHandler,
  req: IncomingMessage,
  path: string,
  parsed: unknown,
  stream: Readable = req,
): Promise<ProvisioningResponse> {
  const request: ProvisioningRequest = {
    method: req.method ?? "GET",
    path,
    headers: req.headers,
    body: undefined,
    json: undefined,
    remoteAddress: req.socket.remoteAddress,
  };
  if (!stream.readableEnded) {
    const body = await readBody(stream, req.headers["content-length"], handler.bodyLimit);
    if (body === undefined) return payloadTooLarge;
    request.body = body;
  } else if (parsed instanceof Uint8Array) {
    request.body = parsed;
  } else if (typeof parsed === "string") {
    request.body = Buffer.from(parsed);
  } else if (parsed !== undefined) {
    request.json = parsed;
  }
  // Awaited rather than returned: an async function that returns a promise costs two more ticks.
  return await handler.handle(request);
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

/** The body, or undefined when it is (or declares to be) larger than `limit` bytes. */
function readBody(
  stream: Readable,
  declaredLength: string | undefined,
  limit: number,
): Promise<Buffer | undefined> {
  if (declaredLength !== undefined && Number(declaredLength) > limit) {
    return Promise.resolve(undefined);
  }
  // Plain `on` listeners and a flag, no `once` wrappers or removals: this runs for every request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (chunk: Buffer) => {
      if (size > limit) return;
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      // Past the limit the stream still drains, so that the 413 can be written and the socket closed.
      else resolve(undefined);
    });
    stream.on("end", () => {
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    stream.on("error", reject);
  });
}
