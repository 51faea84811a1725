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

// A4 (attack 2 on issue 42): under a framework's mount, the URLs answered (`Location`,
// `meta.location`, the discovery documents') name the mount, so that following them reads the
// user. The handler never sees the mount in its path: the adapters pass it.
describe("Location and meta.location under a framework's mount", () => {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/scim+json" };
  type Mount = (handler: ScimHandler) => Promise<RequestListener | Server>;
  const mounts: [string, string, { basePath?: string }, Mount][] = [
    [
      "Express app.use('/scim/v2'), basePath ''",
      "/scim/v2",
      { basePath: "" },
      async (handler) =>
        express().use("/scim/v2", toNodeHandler(handler)) as unknown as RequestListener,
    ],
    [
      "Express router under '/api', mounted at '/scim', basePath '/v2'",
      "/api/scim/v2",
      { basePath: "/v2" },
      async (handler) =>
        express().use(
          "/api",
          express.Router().use("/scim", toNodeHandler(handler)),
        ) as unknown as RequestListener,
    ],
    [
      "Fastify prefix '/scim' inside prefix '/tenant', basePath '/v2'",
      "/tenant/scim/v2",
      { basePath: "/v2" },
      async (handler) => {
        const app = Fastify();
        await app.register(
          async (tenant) => {
            await tenant.register(toFastifyPlugin(handler), { prefix: "/scim" });
          },
          { prefix: "/tenant" },
        );
        await app.ready();
        return app.server;
      },
    ],
    [
      // A parametric prefix is matched as the request spells it: never its pattern's length.
      "Fastify prefix '/t/:tenant' inside prefix '/:region', basePath '/scim/v2'",
      "/eu/t/acme-corp/scim/v2",
      { basePath: "/scim/v2" },
      async (handler) => {
        const app = Fastify();
        await app.register(
          async (region) => {
            await region.register(toFastifyPlugin(handler), { prefix: "/t/:tenant" });
          },
          { prefix: "/:region" },
        );
        await app.ready();
        return app.server;
      },
    ],
    [
      "Fastify prefix '/scim/v2/' (a trailing slash), basePath ''",
      "/scim/v2",
      { basePath: "" },
      async (handler) => {
        const app = Fastify();
        await app.register(toFastifyPlugin(handler), { prefix: "/scim/v2/" });
        await app.ready();
        return app.server;
      },
    ],
    [
      "Koa under a koa-mount-like middleware at '/scim/v2', basePath ''",
      "/scim/v2",
      { basePath: "" },
      async (handler) => {
        const scim = toKoaMiddleware(handler);
        // What koa-mount does: strip the prefix from ctx.path and say it in ctx.mountPath.
        return new Koa()
          .use(async (ctx, next) => {
            if (!ctx.path.startsWith("/scim/v2/")) return next();
            const path = ctx.path;
            ctx.path = path.slice("/scim/v2".length);
            Object.assign(ctx, { mountPath: "/scim/v2" });
            try {
              await scim(ctx, next);
            } finally {
              ctx.path = path;
            }
          })
          .callback();
      },
    ],
  ];

  it.each(mounts)("%s", async (_name, under, options, mount) => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token, ...options });
    const server = await listen(await mount(handler));
    try {
      const created = await fetch(`${server.origin}${under}/Users`, {
        method: "POST",
        headers,
        body: JSON.stringify({ userName: "located" }),
      });
      expect(created.status).toBe(201);
      const body = (await created.json()) as { id: string; meta: { location: string } };
      expect(created.headers.get("location")).toBe(`${under}/Users/${body.id}`);
      expect(body.meta.location).toBe(`${under}/Users/${body.id}`);
      const followed = await fetch(`${server.origin}${body.meta.location}`, { headers });
      expect(followed.status).toBe(200);
      // The ETag is the one the mount serves: If-Match with it writes.
      const put = await fetch(`${server.origin}${body.meta.location}`, {
        method: "PUT",
        headers: { ...headers, "if-match": followed.headers.get("etag") as string },
        body: JSON.stringify({ userName: "located", title: "moved" }),
      });
      expect(put.status).toBe(200);
      const listed = (await (
        await fetch(`${server.origin}${under}/Users`, { headers })
      ).json()) as {
        Resources: { meta: { location: string } }[];
      };
      expect(listed.Resources[0]?.meta.location).toBe(body.meta.location);
      const types = (await (
        await fetch(`${server.origin}${under}/ResourceTypes`, { headers })
      ).json()) as { Resources: { meta: { location: string } }[] };
      expect(types.Resources[0]?.meta.location).toBe(`${under}/ResourceTypes/User`);
    } finally {
      await server.close();
    }
  });

  it("baseUrl, when given, is what every adapter answers with", async () => {
    const handler = createScimHandler({
      store: new MemoryUserStore(),
      token,
      basePath: "",
      baseUrl: "https://app.example.com/scim/v2/",
    });
    const app = express().use("/scim/v2", toNodeHandler(handler));
    const server = await listen(app as unknown as RequestListener);
    try {
      const created = await fetch(`${server.origin}/scim/v2/Users`, {
        method: "POST",
        headers,
        body: JSON.stringify({ userName: "absolute" }),
      });
      const { id } = (await created.json()) as { id: string };
      expect(created.headers.get("location")).toBe(`https://app.example.com/scim/v2/Users/${id}`);
    } finally {
      await server.close();
    }
  });
});
