// The SCIM server on every adapter, unchanged: Entra ID's and Okta's sequences over real loopback
// servers (node:http, Express with and without express.json() in front, Fastify, Koa, Hono).
import type { RequestListener, Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { toFastifyPlugin } from "../../src/adapters/fastify/index.ts";
import { toKoaMiddleware } from "../../src/adapters/koa/index.ts";
import { toNodeErrorHandler, toNodeHandler } from "../../src/adapters/node/index.ts";
import { MemoryUserStore } from "../../src/provisioning/index.ts";
import { createScimHandler, type ScimHandler } from "../../src/scim/index.ts";
import { token } from "../scim/helpers.ts";
import { client, entraSequence, oktaSequence } from "../scim/sequences.ts";
import { start } from "./http.ts";

function listen(listener: RequestListener | Server) {
  return start(listener);
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

// M3 (attack on issue 42): what an edge refuses before the SCIM server reads the request (a body
// over bodyLimit, what express.json() rejected) answers a SCIM error, not the Provisioning API's.
describe("refusals at the edge answer in the SCIM error form", () => {
  const scimError = "urn:ietf:params:scim:api:messages:2.0:Error";

  async function send(
    origin: string,
    body: string,
  ): Promise<{ status: number; type: string | null; body: Record<string, unknown> }> {
    const response = await fetch(`${origin}/scim/v2/Users`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json" },
      body,
    });
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      body: (await response.json()) as Record<string, unknown>,
    };
  }

  const bigBody = JSON.stringify({ userName: "x".repeat(500) });
  const servers: [string, (handler: ScimHandler) => Promise<RequestListener | Server>][] = [
    ["handler.fetch", async (handler) => createAdaptorServer({ fetch: handler.fetch }) as Server],
    ["node:http", async (handler) => toNodeHandler(handler)],
    [
      "Fastify 5",
      async (handler) => {
        const app = Fastify();
        await app.register(toFastifyPlugin(handler));
        await app.ready();
        return app.server;
      },
    ],
    ["Koa 3", async (handler) => new Koa().use(toKoaMiddleware(handler)).callback()],
  ];

  it.each(servers)("%s: a body over bodyLimit answers 413 as SCIM", async (_name, serve) => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token, bodyLimit: 100 });
    const server = await listen(await serve(handler));
    try {
      const answer = await send(server.origin, bigBody);
      expect(answer.status).toBe(413);
      expect(answer.type).toMatch(/^application\/scim\+json/);
      expect(answer.body).toMatchObject({ schemas: [scimError], status: "413" });
    } finally {
      await server.close();
    }
  });

  it("Express: what express.json() refuses, through toNodeErrorHandler, answers as SCIM", async () => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token });
    const app = express()
      .use(express.json({ type: ["application/json", "application/scim+json"], limit: 100 }))
      .use(toNodeHandler(handler), toNodeErrorHandler(handler));
    const server = await listen(app as unknown as RequestListener);
    try {
      const bad = await send(server.origin, "{not json");
      expect([bad.status, bad.body.schemas, bad.body.scimType]).toEqual([
        400,
        [scimError],
        "invalidSyntax",
      ]);
      const big = await send(server.origin, bigBody);
      expect([big.status, big.body.schemas, big.body.status]).toEqual([413, [scimError], "413"]);
      expect(big.type).toMatch(/^application\/scim\+json/);
    } finally {
      await server.close();
    }
  });
});
