import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

export interface LocalServer {
  /** The base URL, without a trailing slash. */
  url: string;
  /** How many TCP connections the server has accepted. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A real HTTP(S) server on 127.0.0.1, on `port` or a free one, which hands each request's body to
 * `handler`.
 */
export async function startServer(
  handler: Handler,
  tls?: { key: string; cert: string },
  port = 0,
): Promise<LocalServer> {
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handler(request, response, Buffer.concat(chunks).toString("utf8")));
  };
  const server = tls === undefined ? createHttpServer(listener) : createHttpsServer(tls, listener);
  const sockets = new Set<Socket>();
  let accepted = 0;
  // TCP connections, TLS handshakes that fail included.
  server.on("connection", (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${address.port}`,
    connections: () => accepted,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
