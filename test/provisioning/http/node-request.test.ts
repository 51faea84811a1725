import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { toNodeHandler } from "../../../src/adapters/node/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";

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
