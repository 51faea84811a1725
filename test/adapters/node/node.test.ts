import { request } from "node:http";
import express from "express";
import { describe, expect, it, vi } from "vitest";
import { toNodeHandler } from "../../../src/adapters/node/index.ts";
import {
  allowAddresses,
  createProvisioningHandler,
  MemoryUserStore,
} from "../../../src/provisioning/index.ts";
import { sendChunked, start } from "../http.ts";

describe("toNodeHandler", () => {
  it("answers 413 to a chunked body past the limit and closes the connection", async () => {
    const store = new MemoryUserStore();
    const server = await start(toNodeHandler(createProvisioningHandler({ store, bodyLimit: 100 })));
    try {
      const chunks = ['{"uuid":"u1","full_name":"', ...Array(50).fill("x".repeat(50)), '"}'];
      const response = await sendChunked(`${server.origin}/v1/user/create`, chunks);
      expect(response.status).toBe(413);
      expect(response.headers.connection).toBe("close");
      expect(JSON.parse(response.body)).toMatchObject({ error: "payload_too_large" });
      const declared = await fetch(`${server.origin}/v1/user/create`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uuid: "u1", full_name: "x".repeat(100) }),
      });
      expect(declared.status).toBe(413);
      expect(await store.list()).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("survives a client that goes away in the middle of its body", async () => {
    const store = new MemoryUserStore();
    const onError = vi.fn();
    const server = await start(toNodeHandler(createProvisioningHandler({ store, onError })));
    try {
      const req = request(`${server.origin}/v1/user/create`, {
        method: "POST",
        headers: { "content-length": "1000" },
      });
      req.on("error", () => {});
      req.write('{"uuid":"gone",');
      await new Promise((resolve) => setTimeout(resolve, 20));
      const closed = new Promise((resolve) => req.once("close", resolve));
      req.destroy();
      await closed;
      const after = await fetch(`${server.origin}/v1/user/create`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"uuid":"next"}',
      });
      expect(after.status).toBe(201);
      expect((await store.list()).map((user) => user.uuid)).toEqual(["next"]);
      expect(onError).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  });

  it("hands other paths to next() as Express middleware, body unread", async () => {
    const store = new MemoryUserStore();
    const app = express()
      .use(toNodeHandler(createProvisioningHandler({ store })))
      .post("/v1/other", express.json(), (req, res) => {
        res.json({ echoed: req.body });
      });
    const server = await start(app);
    try {
      const other = await fetch(`${server.origin}/v1/other`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}',
      });
      expect(await other.json()).toEqual({ echoed: { a: 1 } });
      expect((await fetch(`${server.origin}/v1/ping`)).status).toBe(204);
    } finally {
      await server.close();
    }
  });

  it("gives allowAddresses the socket address, never X-Forwarded-For", async () => {
    const store = new MemoryUserStore();
    const handler = (allowed: string) =>
      toNodeHandler(createProvisioningHandler({ store, authorize: allowAddresses([allowed]) }));
    const open = await start(handler("127.0.0.0/8"));
    const closed = await start(handler("10.0.0.0/8"));
    try {
      expect((await fetch(`${open.origin}/v1/ping`)).status).toBe(204);
      const spoofed = await fetch(`${closed.origin}/v1/ping`, {
        headers: { "x-forwarded-for": "10.0.0.1" },
      });
      expect(spoofed.status).toBe(403);
    } finally {
      await open.close();
      await closed.close();
    }
  });
});
