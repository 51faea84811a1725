// The Provisioning API's Web edge: `handler.fetch`, a Request in, a Response out, over the
// plain-data core. It reads the body up to the limit (body-limit.ts) and hands plain data to
// `handle`, as the Node adapters do through node-request.ts.
//
// It lives in the core, not in src/adapters, because `handler.fetch` is the core's own member:
// Bun.serve, Deno.serve, Workers, Hono and Next.js take it as it is, with no adapter to import. So
// what those servers pass beside the request stays here too (runtime-context.ts): the peer address
// from Bun's server or Deno's connection info, and the Node request that @hono/node-server hands
// over beside the Web one, read as the Node adapter reads it because building a Web Request's
// headers and body stream costs more than the rest of a create.
import type { ServedHandler } from "../handler-options.ts";
import { headerOf } from "../headers.ts";
import type { ProvisioningRequest, ProvisioningResponse, RequestHeaders } from "../types.ts";
import { payloadTooLarge, readNodeBodyAsync, readWebBody } from "./body-limit.ts";
import { nodeContextOf, remoteAddressOf } from "./runtime-context.ts";

/** The parts of a handler the Web edge drives. */
export type FetchCore = Pick<ServedHandler, "handle" | "owns" | "bodyLimit" | "edgeAnswers">;

/**
 * Builds `handler.fetch` over the core. The peer address is looked up when something reads it
 * (an `authorize` guard, the span's `client.address`), and not at all when nothing does. On a Node
 * server that passes its Node request beside the Web one, the headers are read from its raw list,
 * as the Node adapter does (building the Request's `Headers` would cost more than the rest of a
 * create), and so is the body while nothing has read it yet.
 */
export function createFetchEntry(
  core: FetchCore,
): (request: Request, context?: unknown) => Promise<Response> {
  const { handle, owns, bodyLimit } = core;
  const tooLarge = core.edgeAnswers?.bodyTooLarge ?? payloadTooLarge;
  return async (request, context) => {
    const url = request.url;
    let path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const method = request.method;
    const node = nodeContextOf(context);
    if (method === "DELETE") path = deletePath(path, node?.incoming.url);
    const headers = node === undefined ? request.headers : node.incoming.rawHeaders;
    let body: Uint8Array | undefined;
    if (method !== "GET" && method !== "HEAD" && owns(path)) {
      const declared = headerOf(headers, "content-length");
      // From the Node request when its body is untouched, as the Node adapter reads it: no Web
      // stream and no ArrayBuffer copy.
      body =
        node === undefined || node.incoming.readableDidRead !== false
          ? await readWebBody(request, declared, bodyLimit)
          : await readNodeBodyAsync(node.incoming, declared, bodyLimit);
      if (body === undefined) return toWebResponse(tooLarge);
    }
    return toWebResponse(
      await handle(new WebRequest(method, path, headers, body, request, context)),
    );
  };
}

/**
 * The core's request for a Web Request. The peer address is a getter on the prototype, read when
 * something needs it (an `authorize` guard, the span's `client.address`) and never otherwise. A
 * class rather than an object literal with a getter: for such a literal V8 defines the getter by a
 * runtime call and allocates its closure, and the context it captures, on every request
 * (bench/README.md, issue 28).
 */
class WebRequest implements ProvisioningRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: RequestHeaders;
  readonly body: Uint8Array | undefined;
  readonly #request: Request;
  readonly #context: unknown;

  constructor(
    method: string,
    path: string,
    headers: RequestHeaders,
    body: Uint8Array | undefined,
    request: Request,
    context: unknown,
  ) {
    this.method = method;
    this.path = path;
    this.headers = headers;
    this.body = body;
    this.#request = request;
    this.#context = context;
  }

  get remoteAddress(): string | undefined {
    const node = nodeContextOf(this.#context);
    return node === undefined
      ? remoteAddressOf(this.#request, this.#context)
      : node.incoming.socket?.remoteAddress;
  }
}

function toWebResponse(response: ProvisioningResponse): Response {
  const headers = response.closeConnection
    ? { ...response.headers, connection: "close" }
    : response.headers;
  return new Response(response.body ?? null, { status: response.status, headers });
}

const userSegment = "/v1/user/";
const dotSegment = /^(?:\.|%2e){1,2}$/i;

/**
 * The path of a delete whose uuid is "." or ".." (or holds such a segment after a "/"). A Web
 * Request's URL has resolved it away, as WHATWG URL does in every runtime (Bun, Deno, Node's
 * Request): `/v1/user/%2E` reads `/v1/user/`, `/v1/user/%2E%2E` reads `/v1/`. With the raw request
 * target (the Node request a server passes beside the Web one), the segment is taken from it, as
 * the Node adapters take it from `req.url`. Without it, these two shapes are read as the uuids
 * "." and "..": nothing the platform sends resolves to them otherwise, since its uuids are never
 * empty.
 */
function deletePath(path: string, rawTarget: string | undefined): string {
  const query = path.indexOf("?");
  const bare = query === -1 ? path : path.slice(0, query);
  const user = bare.endsWith(userSegment);
  if (!user && !bare.endsWith("/v1/")) return path;
  // The uuid's place once a user route's "user/" is back.
  const prefix = user ? bare : `${bare}user/`;
  if (rawTarget === undefined) return `${prefix}${user ? "." : ".."}`;
  const rawQuery = rawTarget.indexOf("?");
  const rawPath = rawQuery === -1 ? rawTarget : rawTarget.slice(0, rawQuery);
  const at = rawPath.indexOf(userSegment);
  if (at === -1) return path;
  const segment = rawPath.slice(at + userSegment.length);
  return segment.split("/").some((part) => dotSegment.test(part)) ? `${prefix}${segment}` : path;
}
