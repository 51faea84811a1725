import { once } from "node:events";
import type { RequestListener } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { createSelfSignedCertificate } from "../../src/cli/self-signed-certificate.ts";

/** An https:// server on loopback: its base URL (no trailing slash) and its certificate (PEM). */
export interface SelfSignedServer {
  url: string;
  cert: string;
}

/**
 * Starts https:// servers with a fresh self-signed certificate on 127.0.0.1 and a free port, each
 * closed after the test that started it: an application whose certificate a client trusts only
 * when it is given it. The handler answers 204 to everything unless one is passed.
 */
export function serveSelfSignedForEachTest(): (
  handler?: RequestListener,
) => Promise<SelfSignedServer> {
  const running: Server[] = [];
  afterEach(() => {
    for (const server of running.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });
  return async (handler = (_, response) => response.writeHead(204).end()) => {
    const { key, cert } = await createSelfSignedCertificate();
    const server = createServer({ key, cert }, handler);
    running.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, cert };
  };
}
