import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { mount } from "hono/mount";
import Koa from "koa";
import { describe, it } from "vitest";
import { toFastifyPlugin } from "../../src/adapters/fastify/index.ts";
import { toKoaMiddleware } from "../../src/adapters/koa/index.ts";
import { toNodeHandler } from "../../src/adapters/node/index.ts";
import { runScenario, type ScenarioServer } from "./scenario.ts";

async function listen(listener: RequestListener | Server, path = ""): Promise<ScenarioServer> {
  const server = typeof listener === "function" ? createServer(listener) : listener;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

describe("the shared scenario on a real loopback server", () => {
  it("node:http", () => runScenario((handler) => listen(toNodeHandler(handler))));

  it("node:http under a basePath", () =>
    runScenario((handler) => listen(toNodeHandler(handler), "/ldap/auth"), {
      basePath: "/ldap/auth/",
    }));

  it("Express 5", () =>
    runScenario((handler) => listen(express().use(toNodeHandler(handler))), { passesOn: true }));

  it("Express 5 mounted with app.use('/prefix', ...): the API's JSON 404 under the mount", () =>
    runScenario((handler) => listen(express().use("/prefix", toNodeHandler(handler)), "/prefix")));

  it("Express 5 after express.json() consumed the body", () =>
    runScenario(
      (handler) => listen(express().use(express.json()).use("/p", toNodeHandler(handler)), "/p"),
      { parserInFront: true },
    ));

  it("Express 5 after express.raw() and express.text() consumed the body", () =>
    runScenario(
      (handler) =>
        listen(
          express()
            .use(express.raw({ type: "application/json" }))
            .use(express.text({ type: "text/*" }))
            .use(toNodeHandler(handler)),
        ),
      { passesOn: true },
    ));

  it("Fastify 5, registered with a prefix", () =>
    runScenario(async (handler) => {
      const app = Fastify();
      await app.register(toFastifyPlugin(handler), { prefix: "/prefix" });
      await app.ready();
      return listen(app.server, "/prefix");
    }));

  it("Koa 3", () =>
    runScenario((handler) => listen(new Koa().use(toKoaMiddleware(handler)).callback()), {
      passesOn: true,
    }));

  it("Hono on @hono/node-server, mounted under a path", () =>
    runScenario(async (handler) => {
      const app = new Hono().all("/hono/*", mount(handler.fetch));
      return listen(createAdaptorServer({ fetch: app.fetch }) as Server, "/hono");
    }));

  it("Hono on @hono/node-server, with basePath", () =>
    runScenario(
      async (handler) => {
        const app = new Hono().all("/hono/*", (c) => handler.fetch(c.req.raw));
        return listen(createAdaptorServer({ fetch: app.fetch }) as Server, "/hono");
      },
      { basePath: "/hono" },
    ));
});
