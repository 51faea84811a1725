// What Web servers pass to a fetch callback beside the Request, read by `handler.fetch`. Each
// runtime passes something else: Bun.serve its server (`requestIP`), Deno.serve the connection
// info (`remoteAddr`), @hono/node-server (and Hono's `mount` after it) the Node request as
// `incoming`. These quirks live in the core's edge rather than in an adapter because
// `handler.fetch` is handed to those servers as it is (`Bun.serve({ fetch: handler.fetch })`,
// `Deno.serve(handler.fetch)`): there is no adapter between them to hold them.
import type { NodeBodyStream } from "./body-limit.ts";

/**
 * What a Node server that speaks fetch passes beside the request: @hono/node-server (and Hono's
 * `mount` after it) hands over the Node request as `incoming`.
 */
export interface NodeContext {
  incoming: NodeBodyStream & {
    rawHeaders: readonly string[];
    /** The request target as it came on the wire, dot segments unresolved. */
    url?: string | undefined;
    /** Whether anything (a middleware before the API) has started reading the body. */
    readableDidRead?: boolean;
    socket?: { remoteAddress?: string | undefined };
  };
}

/** The Node request beside the Web one, when the server passed one. */
export function nodeContextOf(context: unknown): NodeContext | undefined {
  const incoming = (context as Partial<NodeContext> | null | undefined)?.incoming;
  return Array.isArray(incoming?.rawHeaders) ? (context as NodeContext) : undefined;
}

/** The peer address from fetch's second argument: explicit, Deno.serve's info, or Bun's server. */
export function remoteAddressOf(request: Request, context: unknown): string | undefined {
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
