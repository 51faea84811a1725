// Attack 2: the SCIM server behind the adapters, as examples/servers mounts it (Express
// `app.use("/scim/v2", …)`, Fastify `prefix: "/scim/v2"`, both with `basePath: ""`), on real
// loopback servers. RFC 7644 §3.3: a created resource's `Location` header (and RFC 7643 §3.1
// meta.location) is the resource's URI; the server builds it from `basePath` alone, so under a
// mount it points at `/Users/<id>`, outside the SCIM server: following it answers 404.
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

async function expressApp(): Promise<string> {
  const scim = createScimHandler({ store: new MemoryUserStore(), token, basePath: "" });
  const app = express();
  app.use("/scim/v2", toNodeHandler(scim), toNodeErrorHandler(scim));
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

async function fastifyApp(): Promise<string> {
  const scim = createScimHandler({ store: new MemoryUserStore(), token, basePath: "" });
  const app: FastifyInstance = Fastify();
  await app.register(toFastifyPlugin(scim), { prefix: "/scim/v2" });
  await app.listen({ port: 0, host: "127.0.0.1" });
  closers.push(() => app.close());
  const { port } = app.server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

const headers = { authorization: `Bearer ${token}`, "content-type": "application/scim+json" };

describe.each([
  ["Express, app.use('/scim/v2')", expressApp],
  ["Fastify, prefix '/scim/v2'", fastifyApp],
])("%s", (_name, start) => {
  it("the Location of a created user reads that user", async () => {
    const origin = await start();
    const created = await fetch(`${origin}/scim/v2/Users`, {
      method: "POST",
      headers,
      body: JSON.stringify({ userName: "located" }),
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { id: string; meta: { location: string } };
    const location = created.headers.get("location") as string;
    expect(location).toBe(body.meta.location);
    const followed = await fetch(new URL(location, origin), { headers });
    expect(followed.status).toBe(200);
    expect(((await followed.json()) as { id: string }).id).toBe(body.id);
  });
});
