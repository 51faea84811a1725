// The SCIM server on every adapter, unchanged: Entra ID's and Okta's sequences over real loopback
// servers (node:http, Express with and without express.json() in front, Fastify, Koa, Hono).
import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { describe, it } from "vitest";
import { toFastifyPlugin } from "../../src/adapters/fastify/index.ts";
import { toKoaMiddleware } from "../../src/adapters/koa/index.ts";
import { toNodeHandler } from "../../src/adapters/node/index.ts";
import { MemoryUserStore } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimHandler } from "../../src/scim/index.ts";
import { token } from "../scim/helpers.ts";
import { client, entraSequence, oktaSequence } from "../scim/sequences.ts";

async function listen(
  listener: RequestListener | Server,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = typeof listener === "function" ? createServer(listener) : listener;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

async function both(
  start: (handler: ScimHandler) => Promise<{ origin: string; close(): Promise<void> }>,
  path = "/scim/v2",
) {
  const handler = createScimHandler({
    store: new MemoryUserStore({ unique: ["username"] }),
    token,
  });
  const server = await start(handler);
  try {
    await entraSequence(client(`${server.origin}${path}`), "-entra");
    await oktaSequence(client(`${server.origin}${path}`, "application/json"), "-okta");
  } finally {
    await server.close();
  }
}

describe("Entra ID's and Okta's sequences on every adapter", () => {
  it("handler.fetch on @hono/node-server", () =>
    both(async (handler) => listen(createAdaptorServer({ fetch: handler.fetch }) as Server)));

  it("Hono routing to handler.fetch", () =>
    both(async (handler) => {
      const app = new Hono().all("/scim/v2/*", (context) => handler.fetch(context.req.raw));
      return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
    }));

  it("node:http", () => both(async (handler) => listen(toNodeHandler(handler))));

  it("Express 5, with express.json() in front", () =>
    both(async (handler) =>
      listen(
        express()
          .use(express.json({ type: ["application/json", "application/scim+json"] }))
          .use(toNodeHandler(handler)) as unknown as RequestListener,
      ),
    ));

  it("Fastify 5", () =>
    both(async (handler) => {
      const app = Fastify();
      await app.register(toFastifyPlugin(handler));
      await app.ready();
      return listen(app.server);
    }));

  it("Koa 3", () =>
    both(async (handler) => listen(new Koa().use(toKoaMiddleware(handler)).callback())));
});
