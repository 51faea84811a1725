// A raw node:http client for what fetch cannot do: a chunked body with no length, a client that
// goes away in the middle of its body.
import { once } from "node:events";
import { createServer, type RequestListener, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts `listener` (or a server) on loopback; returns its origin and a closer. */
export async function start(listener: RequestListener | Server) {
  const server = typeof listener === "function" ? createServer(listener) : listener;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** Sends `chunks` one by one as a chunked body; resolves with the status, headers and body. */
export async function sendChunked(
  url: string,
  chunks: Iterable<string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const req = request(url, { method: "POST", headers: { "content-type": "application/json" } });
  const answered = once(req, "response");
  req.on("error", () => {}); // The server may close while the rest of the body is in flight.
  for (const chunk of chunks) {
    if (req.destroyed) break;
    req.write(chunk);
  }
  req.end();
  const [res] = (await answered) as [import("node:http").IncomingMessage];
  let body = "";
  for await (const chunk of res) body += chunk;
  return { status: res.statusCode ?? 0, headers: res.headers, body };
}
