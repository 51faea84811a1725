// Attack 3: mount paths a framework gives with parameters (Express `app.use("/:tenant", …)`,
// Fastify `prefix: "/t/:tenant"`): Location and meta.location must name the URL the request came
// to, never a pattern nor another host; the users behind them are found at that Location.
import { createServer, type Server } from "node:http";
import express from "express";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { toFastifyPlugin } from "../../../src/adapters/fastify/index.ts";
import { toNodeErrorHandler, toNodeHandler } from "../../../src/adapters/node/index.ts";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { token } from "../attack/support.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function post(base: string, path: string) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json" },
    body: JSON.stringify({ userName: `u${Math.random()}` }),
  });
  const text = await response.text();
  return { status: response.status, location: response.headers.get("location"), text };
}

describe("a parametric mount", () => {
  it("Fastify prefix /t/:tenant: the POST reaches /Users and Location names the tenant, not the pattern", async () => {
    const scim = createScimHandler({ store: new MemoryUserStore(), token, basePath: "" });
    const app: FastifyInstance = Fastify();
    await app.register(toFastifyPlugin(scim), { prefix: "/t/:tenant" });
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(() => app.close());
    const { port } = app.server.address() as { port: number };
    const base = `http://127.0.0.1:${port}`;
    const answer = await post(base, "/t/acme/Users");
    expect(
      { status: answer.status, location: answer.location?.replace(/[^/]+$/, "<id>") },
      answer.text,
    ).toEqual({
      status: 201,
      location: "/t/acme/Users/<id>",
    });
  });

  it("Express app.use('/:tenant'): a request for //evil.example never gets a protocol-relative Location", async () => {
    const scim = createScimHandler({ store: new MemoryUserStore(), token });
    const app = express();
    app.use("/:tenant", toNodeHandler(scim), toNodeErrorHandler(scim));
    const server: Server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const { port } = server.address() as { port: number };
    const base = `http://127.0.0.1:${port}`;
    for (const path of [
      "/acme/scim/v2/Users",
      "/%2F%2Fevil.example/scim/v2/Users",
      "/..%2F..%2Fx/scim/v2/Users",
    ]) {
      const answer = await post(base, path);
      if (answer.location !== null) expect(answer.location.startsWith("//")).toBe(false);
      if (answer.location !== null) expect(answer.location).not.toMatch(/^[a-z]+:/i);
    }
  });
});
