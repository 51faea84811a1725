import Koa from "koa";
import { describe, expect, it } from "vitest";
import { toKoaMiddleware } from "../../../src/adapters/koa/index.ts";
import { createProvisioningHandler, MemoryUserStore } from "../../../src/provisioning/index.ts";
import { start } from "../http.ts";

describe("toKoaMiddleware", () => {
  it("hands other paths to the next middleware, body unread", async () => {
    const store = new MemoryUserStore();
    const koa = new Koa()
      .use(toKoaMiddleware(createProvisioningHandler({ store, basePath: "/ldap" })))
      .use(async (ctx) => {
        let body = "";
        for await (const chunk of ctx.req) body += chunk;
        ctx.body = { path: ctx.path, body };
      });
    const server = await start(koa.callback());
    try {
      const other = await fetch(`${server.origin}/v1/ping`, { method: "POST", body: "raw" });
      expect(await other.json()).toEqual({ path: "/v1/ping", body: "raw" });
      expect((await fetch(`${server.origin}/ldap/v1/ping`)).status).toBe(204);
    } finally {
      await server.close();
    }
  });

  it("uses ctx.request.body when a body parser read the body first", async () => {
    const store = new MemoryUserStore();
    const koa = new Koa()
      .use(async (ctx, next) => {
        let text = "";
        for await (const chunk of ctx.req) text += chunk;
        (ctx.request as { body?: unknown }).body = JSON.parse(text);
        await next();
      })
      .use(toKoaMiddleware(createProvisioningHandler({ store })));
    const server = await start(koa.callback());
    try {
      const created = await fetch(`${server.origin}/v1/user/create`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"uuid":"u1","email":"a@b.c"}',
      });
      expect([created.status, await created.text()]).toEqual([201, ""]);
      expect(created.headers.get("content-type")).toBeNull();
      expect(await store.get("u1")).toEqual({ uuid: "u1", email: "a@b.c" });
    } finally {
      await server.close();
    }
  });

  it("answers the API's JSON 404 for an unknown path under a basePath or a koa-mount prefix", async () => {
    const store = new MemoryUserStore();
    const underBase = new Koa().use(
      toKoaMiddleware(createProvisioningHandler({ store, basePath: "/ldap/auth" })),
    );
    // koa-mount strips its prefix from the path and records it as ctx.mountPath.
    const underMount = new Koa()
      .use(async (ctx, next) => {
        (ctx as { mountPath?: string }).mountPath = "/ldap/auth";
        await next();
      })
      .use(toKoaMiddleware(createProvisioningHandler({ store })));
    for (const [koa, path] of [
      [underBase, "/ldap/auth/v2/nothing"],
      [underMount, "/v2/nothing"],
    ] as const) {
      const server = await start(koa.callback());
      try {
        const unknown = await fetch(`${server.origin}${path}`);
        expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([
          404,
          "not_found",
        ]);
      } finally {
        await server.close();
      }
    }
  });
});
