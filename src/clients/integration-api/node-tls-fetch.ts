// The fetch that honours the tls option on Node (a CA, or no verification), through node:https.
import type * as Https from "node:https";
import type * as Stream from "node:stream";
import type { TlsOptions } from "./client-options.ts";

type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

interface NodeProcess {
  getBuiltinModule(id: "node:https"): typeof Https;
  getBuiltinModule(id: "node:stream"): typeof Stream;
}

const nullBodyStatuses = new Set([204, 205, 304]);

/**
 * A fetch over node:https with its own keep-alive agent, for `tls` on Node: Node's global fetch
 * takes no CA per call without undici's Agent, which is not a dependency. Builtins come from
 * process.getBuiltinModule, so no bundler for Workers or the browser follows an import to them.
 * Errors before an answer are TypeError("fetch failed") with the socket error as cause, the shape
 * of Node's own fetch, so that retry logic treats both alike.
 */
export function createNodeTlsFetch(tls: TlsOptions): Fetch {
  const node = (globalThis as unknown as { process: NodeProcess }).process;
  const https = node.getBuiltinModule("node:https");
  const { Readable } = node.getBuiltinModule("node:stream");
  const agent = new https.Agent({
    keepAlive: true,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  });

  return async (input, init) => {
    const request = init === undefined ? input : new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== "https:") {
      throw new TypeError(`The tls option applies to https URLs only, not ${url.protocol}`);
    }
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    const signal = request.signal;
    signal.throwIfAborted();
    return new Promise<Response>((resolve, reject) => {
      const outgoing = https.request(
        url,
        { method: request.method, headers: Object.fromEntries(request.headers), agent, signal },
        (incoming) => {
          const headers = new Headers();
          for (let index = 0; index < incoming.rawHeaders.length; index += 2) {
            headers.append(incoming.rawHeaders[index] ?? "", incoming.rawHeaders[index + 1] ?? "");
          }
          const status = incoming.statusCode ?? 0;
          const empty = request.method === "HEAD" || nullBodyStatuses.has(status);
          if (empty) incoming.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), {
              status,
              statusText: incoming.statusMessage ?? "",
              headers,
            }),
          );
        },
      );
      outgoing.on("error", (error) => {
        reject(signal.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
      });
      outgoing.end(body);
    });
  };
}
