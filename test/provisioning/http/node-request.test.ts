import { once } from "node:events";
import { createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { toNodeHandler } from "../../../src/adapters/node/index.ts";
import { readNodeRequest } from "../../../src/provisioning/http/node-request.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import type { ProvisioningRequest } from "../../../src/provisioning/types.ts";

describe("the Node edge's answers", () => {
  it("keep the connection open, and close it only after a 413", async () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore(), bodyLimit: 64 });
    const server = createServer(toNodeHandler(handler)).listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const post = (body: string) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const sent = request(
          { host: "127.0.0.1", port, method: "POST", path: "/v1/user/create" },
          (answer) => {
            answer.resume();
            resolve({ status: answer.statusCode ?? 0, connection: answer.headers.connection });
          },
        );
        sent.on("error", reject);
        sent.end(body);
      });
    try {
      expect(await post('{"uuid":"u1"}')).toEqual({ status: 201, connection: "keep-alive" });
      expect(await post(JSON.stringify({ uuid: "u2", username: "x".repeat(100) }))).toEqual({
        status: 413,
        connection: "close",
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("readNodeRequest", () => {
  it("looks the peer address up on the socket when it is read, not for every request", () => {
    const handler = createProvisioningHandler({ store: new MemoryUserStore() });
    let lookups = 0;
    // A request whose body a parser in front already read: ready() is called at once.
    const req = {
      method: "POST",
      rawHeaders: ["Content-Type", "application/json"],
      readableEnded: true,
      socket: {
        get remoteAddress() {
          lookups++;
          return "203.0.113.7";
        },
      },
    } as unknown as IncomingMessage;
    let built: ProvisioningRequest | undefined;
    readNodeRequest(
      handler,
      req,
      "/v1/user/create",
      Buffer.from('{"uuid":"u1"}'),
      req,
      (request) => {
        built = request;
      },
    );
    expect(built).toMatchObject({ method: "POST", path: "/v1/user/create" });
    expect(lookups).toBe(0);
    expect(built?.remoteAddress).toBe("203.0.113.7");
    expect(lookups).toBe(1);
  });
});
