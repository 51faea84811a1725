// The one home of the body-size rule, for the Provisioning API's Web path (handler.fetch), its Node
// adapters (node:http, Express, Fastify, Koa) and the CLI's local servers: a declared
// Content-Length over the limit is refused before reading; a body without one is read until it
// passes the limit, then refused. Callers answer 413 and close the connection.

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

/** Joins chunks into one array, without a copy when there is one chunk. */
function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
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
    if (size <= limit) done(concat(chunks, size));
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
  return concat(chunks, size);
}
