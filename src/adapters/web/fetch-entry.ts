// The Web-standard adapter behind `handler.fetch`: a Request in, a Response out, the peer address
// from what Bun.serve, Deno.serve and @hono/node-server pass beside the request. Like the Node adapters, it reads the
// body up to the limit and hands plain data to the core.
import { type NodeBodyStream, readNodeBodyAsync, readWebBody } from "../../internal/body-limit.ts";
import { payloadTooLarge } from "../../provisioning/errors.ts";
import type { ProvisioningHandler } from "../../provisioning/handler-options.ts";
import { headerOf } from "../../provisioning/headers.ts";
import type { ProvisioningResponse } from "../../provisioning/types.ts";

/** The parts of a handler the Web adapter drives. */
export type FetchCore = Pick<ProvisioningHandler, "handle" | "owns" | "bodyLimit">;

/**
 * What a Node server that speaks fetch passes beside the request: @hono/node-server (and Hono's
 * `mount` after it) hands over the Node request as `incoming`.
 */
interface NodeContext {
  incoming: NodeBodyStream & {
    rawHeaders: readonly string[];
    /** The request target as it came on the wire, dot segments unresolved. */
    url?: string | undefined;
    /** Whether anything (a middleware before the API) has started reading the body. */
    readableDidRead?: boolean;
    socket?: { remoteAddress?: string | undefined };
  };
}

function nodeContextOf(context: unknown): NodeContext | undefined {
  const incoming = (context as Partial<NodeContext> | null | undefined)?.incoming;
  return Array.isArray(incoming?.rawHeaders) ? (context as NodeContext) : undefined;
}

/**
 * Builds `handler.fetch` over the core. The peer address is looked up when something reads it
 * (an `authorize` guard, the span's `client.address`), and not at all when nothing does. On a Node server that passes
 * its Node request beside the Web one, the headers are read from its raw list, as the Node
 * adapter does (building the Request's `Headers` would cost more than the rest of a create), and
 * so is the body while nothing has read it yet.
 */
export function createFetchEntry(
  core: FetchCore,
): (request: Request, context?: unknown) => Promise<Response> {
  const { handle, owns, bodyLimit } = core;
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
      if (body === undefined) return toWebResponse(payloadTooLarge);
    }
    return toWebResponse(
      await handle({
        method,
        path,
        headers,
        body,
        get remoteAddress() {
          return node === undefined
            ? remoteAddressOf(request, context)
            : node.incoming.socket?.remoteAddress;
        },
      }),
    );
  };
}

function toWebResponse(response: ProvisioningResponse): Response {
  const headers = response.closeConnection
    ? { ...response.headers, connection: "close" }
    : response.headers;
  return new Response(response.body ?? null, { status: response.status, headers });
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
