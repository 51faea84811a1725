import { afterEach } from "vitest";
import { type Handler, type LocalServer, startServer } from "../integration-api/local-server.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A real server on loopback (on `port`, or a free one), closed after the test. */
export async function serve(handler: Handler, port?: number): Promise<LocalServer> {
  const server = await startServer(handler, undefined, port);
  servers.push(server);
  return server;
}

/** Answers 201 with an empty body, as the Audit API does. */
export const created: Handler = (_request, response) => {
  response.writeHead(201, { "content-type": "text/plain; charset=utf-8", "content-length": "0" });
  response.end();
};
