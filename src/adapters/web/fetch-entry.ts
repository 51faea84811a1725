// The Web-standard adapter behind `handler.fetch`: a Request in, a Response out, the peer address
// from what Bun.serve and Deno.serve pass beside the request. Like the Node adapters, it reads the
// body up to the limit and hands plain data to the core.
import { readWebBody } from "../../internal/body-limit.ts";
import { payloadTooLarge } from "../../provisioning/errors.ts";
import type { ProvisioningHandler } from "../../provisioning/options.ts";
import type { ProvisioningResponse } from "../../provisioning/types.ts";

/** The parts of a handler the Web adapter drives. */
export type FetchCore = Pick<ProvisioningHandler, "handle" | "owns" | "bodyLimit">;

/**
 * Builds `handler.fetch` over the core. `readsPeer` is whether anything needs the peer address
 * (an `authorize` guard): when nothing does, it is not looked up.
 */
export function createFetchEntry(
  core: FetchCore,
  readsPeer: boolean,
): (request: Request, context?: unknown) => Promise<Response> {
  const { handle, owns, bodyLimit } = core;
  return async (request, context) => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const method = request.method;
    let body: Uint8Array | undefined;
    if (method !== "GET" && method !== "HEAD" && owns(path)) {
      body = await readWebBody(request, bodyLimit);
      if (body === undefined) return toWebResponse(payloadTooLarge);
    }
    return toWebResponse(
      await handle({
        method,
        path,
        headers: request.headers,
        body,
        remoteAddress: readsPeer ? remoteAddressOf(request, context) : undefined,
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
