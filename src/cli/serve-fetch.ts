import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import {
  bodyTooLarge,
  readNodeBodyAsync,
  resolveBodyLimit,
} from "../provisioning/http/body-limit.ts";
import { writeNodeResponse } from "../provisioning/http/node-request.ts";

/** Where and how {@link serveFetch} listens. */
export interface ServeFetchOptions {
  host: string;
  /** 0 picks a free port; the real one is in {@link ServedFetch.baseUrl}. */
  port: number;
  /** Serve HTTPS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
  /** Request bodies above this many bytes answer 413; the Provisioning API's default (1 MiB). */
  bodyLimit?: number;
  /** Receives an error the handler threw; the client gets a 500. */
  onError?: (error: unknown) => void;
}

/** A running server: its base URL (scheme, host and port) and how to stop it. */
export interface ServedFetch {
  baseUrl: string;
  /** Stops listening and closes every connection, idle keep-alive ones included. */
  close(): Promise<void>;
}

/**
 * Serves a Web-standard `(Request) => Response` handler over node:http or node:https, for the
 * CLI's local servers. A `Response.error()` (a network error) drops the connection without an
 * answer, as a failing network would.
 */
export async function serveFetch(
  handler: (request: Request) => Promise<Response>,
  options: ServeFetchOptions,
): Promise<ServedFetch> {
  const bodyLimit = resolveBodyLimit(options.bodyLimit);
  const tooLarge = bodyTooLarge(`this server (${bodyLimit} bytes)`);
  let baseUrl = "";
  const listener = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    void respond(incoming, outgoing).catch((error: unknown) => {
      options.onError?.(error);
      if (outgoing.headersSent) {
        outgoing.destroy();
      } else {
        sendJson(outgoing, 500, "internal_error", "The server failed to answer this request.");
      }
    });
  };
  const respond = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const body = await readNodeBodyAsync(incoming, incoming.headers["content-length"], bodyLimit);
    if (body === undefined) {
      writeNodeResponse(outgoing, tooLarge);
      return;
    }
    const method = incoming.method ?? "GET";
    const headers = new Headers();
    for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2) {
      headers.append(incoming.rawHeaders[index] ?? "", incoming.rawHeaders[index + 1] ?? "");
    }
    const request = new Request(new URL(incoming.url ?? "/", baseUrl), {
      method,
      headers,
      ...(method === "GET" || method === "HEAD" ? {} : { body }),
    });
    const response = await handler(request);
    if (response.type === "error") {
      incoming.socket.destroy();
      return;
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    const responseHeaders = Object.fromEntries(response.headers);
    if (response.status !== 204 && response.status !== 304) {
      responseHeaders["content-length"] = String(bytes.byteLength);
    }
    outgoing.writeHead(response.status, responseHeaders).end(bytes);
  };

  const server = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener)
    : createHttpServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  baseUrl = `${options.tls ? "https" : "http"}://${host}:${port}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function sendJson(outgoing: ServerResponse, status: number, error: string, message: string) {
  const body = JSON.stringify({ error, message });
  outgoing
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      // The rest of an unread body would otherwise be parsed as the next request.
      connection: "close",
    })
    .end(body);
}
