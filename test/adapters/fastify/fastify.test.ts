import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { toFastifyPlugin } from "../../../src/adapters/fastify/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { sendChunked, start } from "../http.ts";

async function app(options: { basePath?: string; bodyLimit?: number } = {}) {
  const store = new MemoryUserStore();
  const fastify = Fastify();
  await fastify.register(toFastifyPlugin(createProvisioningHandler({ store, ...options })));
  fastify.post("/api/echo", async (request) => ({ echoed: request.body }));
  await fastify.ready();
  return { store, server: await start(fastify.server) };
}

describe("toFastifyPlugin", () => {
  it("serves under basePath without a prefix and leaves the application's parsers alone", async () => {
    const { store, server } = await app({ basePath: "/ldap" });
    try {
      const created = await fetch(`${server.origin}/ldap/v1/user/create`, {
        method: "POST",
        body: new TextEncoder().encode('{"uuid":"u1"}'),
      });
      expect(created.status).toBe(201);
      expect(await store.get("u1")).toEqual({ uuid: "u1" });
      const echo = await fetch(`${server.origin}/api/echo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}',
      });
      expect(await echo.json()).toEqual({ echoed: { a: 1 } });
      const unknown = await fetch(`${server.origin}/ldap/v1/nothing`);
      expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([
        404,
        "not_found",
      ]);
    } finally {
      await server.close();
    }
  });

  it("serves every tenant under a parametric prefix, each path as its tenant spells it", async () => {
    const store = new MemoryUserStore();
    const fastify = Fastify();
    await fastify.register(toFastifyPlugin(createProvisioningHandler({ store })), {
      prefix: "/t/:tenant",
    });
    await fastify.ready();
    const server = await start(fastify.server);
    try {
      for (const [tenant, uuid] of [
        ["acme", "u1"],
        ["a-much-longer-tenant-name", "u2"],
      ] as const) {
        const created = await fetch(`${server.origin}/t/${tenant}/v1/user/create`, {
          method: "POST",
          body: JSON.stringify({ uuid }),
        });
        expect(created.status).toBe(201);
        expect(await store.get(uuid)).toEqual({ uuid });
        const unknown = await fetch(`${server.origin}/t/${tenant}/v1/nothing`);
        expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([
          404,
          "not_found",
        ]);
      }
    } finally {
      await server.close();
    }
  });

  it("answers 413 in the API's format to a chunked body past the limit", async () => {
    const { store, server } = await app({ bodyLimit: 100 });
    try {
      const chunks = ['{"uuid":"u1","x":"', ...Array(50).fill("x".repeat(50)), '"}'];
      const response = await sendChunked(`${server.origin}/v1/user/create`, chunks);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body)).toEqual({
        error: "payload_too_large",
        message: expect.any(String),
      });
      expect(await store.list()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
