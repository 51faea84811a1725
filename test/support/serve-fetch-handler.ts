import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/** A running server: its base URL (no trailing slash) and how to stop it. */
export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a Fetch-style handler over real HTTP on 127.0.0.1 and a free port, so that tests cross
 * a socket: percent-encoding, bodies and statuses as a client on the network sees them.
 */
export async function serveFetchHandler(
  handler: (request: Request) => Promise<Response>,
): Promise<RunningServer> {
  const server = createServer(async (incoming, outgoing) => {
    const response = await handler(await toRequest(incoming)).catch(
      () => new Response("handler crashed", { status: 500 }),
    );
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve, reject) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** {@link serveFetchHandler} for a test file: every server it starts is closed after each test. */
export function serveForEachTest(): typeof serveFetchHandler {
  const running: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()));
  });
  return async (handler) => {
    const server = await serveFetchHandler(handler);
    running.push(server);
    return server;
  };
}

async function toRequest(incoming: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const method = incoming.method ?? "GET";
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  return new Request(`http://127.0.0.1${incoming.url ?? "/"}`, {
    method,
    headers,
    ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) }),
  });
}
