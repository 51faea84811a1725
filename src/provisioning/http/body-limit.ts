// The one home of the body-size rule: the limit's default and its check (`bodyLimit`), the
// reading of a body up to it, and the answer past it. The Provisioning API's Web edge
// (handler.fetch), its Node edge (node:http, Express, Fastify, Koa), the core's check of a body an
// adapter hands over, and the CLI's local servers all go through it: a declared Content-Length
// over the limit is refused before reading; a body without one is read until it passes the limit,
// then refused with 413 `payload_too_large`, and the connection closes.
import { concatBytes } from "../../internal/concat-bytes.ts";
import { errorResponse } from "../errors.ts";
import { headerOf } from "../headers.ts";
import type { ProvisioningRequest, ProvisioningResponse } from "../types.ts";

/** The limit when none is given: 1 MiB. */
export const defaultBodyLimit = 1024 * 1024;

/**
 * A `bodyLimit` option, checked, or the default when it is absent.
 *
 * @throws TypeError when it is not a non-negative safe integer.
 */
export function resolveBodyLimit(bodyLimit: number | undefined): number {
  const limit = bodyLimit ?? defaultBodyLimit;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new TypeError("bodyLimit must be a non-negative integer number of bytes");
  }
  return limit;
}

/**
 * The answer to a body over the limit of `server` (what the message names): 413
 * `payload_too_large`. The rest of the body stays unread, so the answer closes the connection.
 */
export function bodyTooLarge(server: string): ProvisioningResponse {
  return {
    ...errorResponse("payload_too_large", `The body exceeds the size limit of ${server}`),
    closeConnection: true,
  };
}

/** The Provisioning API's answer when a body exceeds the handler's `bodyLimit`. */
export const payloadTooLarge: ProvisioningResponse = bodyTooLarge(
  "this Provisioning API (the handler's bodyLimit)",
);

/**
 * What the reader needs of a Node body stream (an IncomingMessage, Fastify's payload), declared
 * here so that this module imports no `node:` module: the Web path runs on every runtime.
 */
export interface NodeBodyStream {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
}

/** Whether a declared Content-Length exceeds `limit` bytes. */
export function declaresMoreThan(contentLength: string | null | undefined, limit: number): boolean {
  return contentLength != null && Number(contentLength) > limit;
}

/**
 * Whether a request handed to the core keeps to `limit`: its bytes, or, for a body a framework
 * parsed in front (whose parser may have had a looser limit), its declared Content-Length.
 */
export function withinBodyLimit(request: ProvisioningRequest, limit: number): boolean {
  return request.json === undefined
    ? (request.body?.byteLength ?? 0) <= limit
    : !declaresMoreThan(headerOf(request.headers, "content-length"), limit);
}

/**
 * Reads a Node request body up to `limit` bytes and calls `done` with it, or with undefined as
 * soon as it is (or declares to be) larger. Past the limit the stream still drains, so that the
 * 413 can be written before the socket closes. `failed` receives a stream error (the client went
 * away); without it such a request is dropped. Callbacks rather than a promise: this runs for
 * every message of a sync.
 */
export function readNodeBody(
  stream: NodeBodyStream,
  contentLength: string | undefined,
  limit: number,
  done: (body: Uint8Array | undefined) => void,
  failed?: (error: unknown) => void,
): void {
  if (declaresMoreThan(contentLength, limit)) {
    done(undefined);
    return;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Plain `on` listeners and a size check, no `once` wrappers or removals.
  stream.on("data", (chunk: Uint8Array) => {
    if (size > limit) return;
    size += chunk.byteLength;
    if (size <= limit) chunks.push(chunk);
    else done(undefined);
  });
  stream.on("end", () => {
    if (size <= limit) done(concatBytes(chunks, size));
  });
  if (failed !== undefined) stream.on("error", failed);
}

/** {@link readNodeBody} as a promise: the body, or undefined when it passes `limit`. */
export function readNodeBodyAsync(
  stream: NodeBodyStream,
  contentLength: string | undefined,
  limit: number,
): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) =>
    readNodeBody(stream, contentLength, limit, resolve, reject),
  );
}

/**
 * Reads a Web Request's body up to `limit` bytes, given its declared Content-Length: the bytes
 * (empty for no body), or undefined when it is (or declares to be) larger. With a declared length the HTTP server already holds the body
 * to it, so `arrayBuffer()` reads it in one go (servers such as @hono/node-server serve that
 * without building a stream); without one the stream is read until it passes the limit.
 */
export async function readWebBody(
  request: Request,
  contentLength: string | null | undefined,
  limit: number,
): Promise<Uint8Array | undefined> {
  if (declaresMoreThan(contentLength, limit)) {
    await request.body?.cancel();
    return undefined;
  }
  if (contentLength != null) {
    const body = new Uint8Array(await request.arrayBuffer());
    return body.byteLength > limit ? undefined : body;
  }
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
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
  return concatBytes(chunks, size);
}
