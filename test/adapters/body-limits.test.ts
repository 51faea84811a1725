// The body limit through each adapter set up as the README shows: a 500 kB record (an Active
// Directory entry with a photo) is stored, a body past `bodyLimit` answers 413 and closes the
// connection, since the rest of the body is never read.
import { once } from "node:events";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import Koa from "koa";
import { afterEach, describe, expect, it } from "vitest";
import { toFastifyPlugin } from "../../src/adapters/fastify/index.ts";
import { toKoaMiddleware } from "../../src/adapters/koa/index.ts";
import { toNodeErrorHandler, toNodeHandler } from "../../src/adapters/node/index.ts";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningHandler,
} from "../../src/provisioning/index.ts";

const mount = "/ldap/auth";

/** Each server as the README sets it up, the API under /ldap/auth, the application beside it. */
const setups: [
  string,
  (options: { store: MemoryUserStore; bodyLimit?: number }) => Promise<Server>,
][] = [
  [
    "node:http",
    async (options) =>
      createServer(toNodeHandler(createProvisioningHandler({ ...options, basePath: mount }))),
  ],
  [
    "Express 5, the API mounted before express.json()",
    async (options) => {
      const handler = createProvisioningHandler(options);
      const app = express();
      app.use(mount, toNodeHandler(handler), toNodeErrorHandler(handler));
      app.use(express.json());
      return createServer(app);
    },
  ],
  [
    "Fastify 5, registered with a prefix",
    async (options) => {
      const app = Fastify();
      await app.register(toFastifyPlugin(createProvisioningHandler(options)), { prefix: mount });
      await app.ready();
      return app.server;
    },
  ],
  [
    "Koa 3, with basePath",
    async (options) => {
      const handler = createProvisioningHandler({ ...options, basePath: mount });
      return createServer(new Koa().use(toKoaMiddleware(handler)).callback());
    },
  ],
  [
    "handler.fetch on @hono/node-server",
    async (options) => {
      const handler: ProvisioningHandler = createProvisioningHandler({
        ...options,
        basePath: mount,
      });
      return createAdaptorServer({ fetch: handler.fetch }) as Server;
    },
  ],
];

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${mount}`;
}

describe.each(setups)("%s", (_name, build) => {
  it("stores a 500 kB record with the default bodyLimit", async () => {
    const store = new MemoryUserStore();
    const url = await listen(await build({ store }));
    const photo = "A".repeat(500_000);
    const response = await fetch(`${url}/v1/user/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uuid: "with-photo", thumbnail_photo: photo }),
    });
    expect(response.status).toBe(201);
    expect((await store.get("with-photo"))?.extra).toEqual({ thumbnail_photo: photo });
  });

  it("answers 413 past bodyLimit and closes the connection", async () => {
    const store = new MemoryUserStore();
    const url = await listen(await build({ store, bodyLimit: 100 }));
    // Declares more than the limit and sends only the start: the rest is never read.
    const req = request(`${url}/v1/user/create`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": "10000" },
    });
    req.on("error", () => {}); // The server may close before the client finishes.
    req.write('{"uuid":"big","x":"');
    const [res] = (await once(req, "response")) as [IncomingMessage];
    let body = "";
    for await (const chunk of res) body += chunk;
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe("close");
    expect(JSON.parse(body)).toMatchObject({ error: "payload_too_large" });
    req.destroy();
    expect(await store.list()).toEqual([]);
  });
});
