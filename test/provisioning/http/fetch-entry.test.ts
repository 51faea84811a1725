// handler.fetch and the uuids "." and "..": a Web Request's URL resolves them away, and the Node
// adapters delete such users, so the Web path must too.
import { once } from "node:events";
import { request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { mount } from "hono/mount";
import { describe, expect, it } from "vitest";
import {
  createProvisioningHandler,
  MemoryUserStore,
  type ProvisioningHandler,
} from "../../../src/provisioning/index.ts";

const origin = "http://app.internal:3000";

async function seeded(basePath = "") {
  const store = new MemoryUserStore();
  const handler = createProvisioningHandler({ store, basePath });
  for (const uuid of [".", "..", "x/..", "keep"]) {
    const body = JSON.stringify({ uuid });
    const created = await handler.fetch(
      new Request(`${origin}${basePath}/v1/user/create`, { method: "POST", body }),
    );
    expect(created.status).toBe(201);
  }
  return { store, handler };
}

const uuids = async (store: MemoryUserStore) => (await store.list()).map((user) => user.uuid);

describe("handler.fetch deletes the users '.' and '..'", () => {
  // Catches: the uuid taken from the resolved URL, which routes these deletes to a 404.
  it.each([
    ["/v1/user/%2E", "."],
    ["/v1/user/%2e%2E", ".."],
    ["/v1/user/.", "."],
    ["/v1/user/..", ".."],
    ["/v1/user/%2E/?x=1", "."],
  ])("from a Web Request to %s", async (target, uuid) => {
    for (const basePath of ["", "/ldap/auth"]) {
      const { store, handler } = await seeded(basePath);
      const deleted = await handler.fetch(
        new Request(`${origin}${basePath}${target}`, { method: "DELETE" }),
      );
      expect(deleted.status).toBe(204);
      expect(await uuids(store)).toEqual(
        [".", "..", "x/..", "keep"].filter((kept) => kept !== uuid),
      );
    }
  });

  // Catches: the inference applied to other methods, or to paths a dot segment did not make.
  it("leaves other methods and other paths alone", async () => {
    const { store, handler } = await seeded();
    const post = await handler.fetch(new Request(`${origin}/v1/user/%2E`, { method: "POST" }));
    expect(post.status).toBe(404);
    const other = await handler.fetch(new Request(`${origin}/v2/user/%2E`, { method: "DELETE" }));
    expect(other.status).toBe(404);
    expect(await uuids(store)).toHaveLength(4);
  });

  // Catches: the raw target ignored when a server passes it (then "x/.." would delete ".").
  it("takes the segment from the raw target a Node server passes beside the request", async () => {
    const { store, handler } = await seeded();
    const node = (url: string) => ({ incoming: { rawHeaders: [], url }, outgoing: {} });
    const slash = await handler.fetch(
      new Request(`${origin}/v1/user/x/..`, { method: "DELETE" }),
      node("/v1/user/x/.."),
    );
    expect(slash.status).toBe(204);
    expect(await uuids(store)).toEqual([".", "..", "keep"]);
    // A raw "/v1/user/" has no uuid: 404, as on the Node adapters, rather than a delete of ".".
    const empty = await handler.fetch(
      new Request(`${origin}/v1/user/`, { method: "DELETE" }),
      node("/v1/user/"),
    );
    expect(empty.status).toBe(404);
    // Resolved to /v1/ as /v1/user/.. is, but no user route in the raw target, nor in its query.
    for (const raw of ["/v1/abc/xyz/../..", "/v1/?next=/v1/user/."]) {
      const other = await handler.fetch(
        new Request(`${origin}${raw}`, { method: "DELETE" }),
        node(raw),
      );
      expect(other.status).toBe(404);
    }
    expect(await uuids(store)).toEqual([".", "..", "keep"]);
  });
});

/** Sends a DELETE with its request target as written: fetch() would resolve the dot segments. */
async function rawDelete(port: number, target: string): Promise<number> {
  const sent = request({ host: "127.0.0.1", port, path: target, method: "DELETE" });
  sent.end();
  const [response] = (await once(sent, "response")) as [import("node:http").IncomingMessage];
  response.resume();
  return response.statusCode ?? 0;
}

async function serve(fetch: (request: Request, env: unknown) => Response | Promise<Response>) {
  const server = createAdaptorServer({ fetch }) as Server;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

describe("through a real server (@hono/node-server on loopback)", () => {
  const cases: [string, (handler: ProvisioningHandler) => Parameters<typeof serve>[0], string][] = [
    ["handler.fetch served directly", (handler) => handler.fetch, ""],
    [
      "Hono, mounted under a path",
      (handler) => new Hono().all("/hono/*", mount(handler.fetch)).fetch,
      "/hono",
    ],
  ];

  it.each(cases)("%s", async (_name, app, prefix) => {
    const { store, handler } = await seeded();
    const server = await serve(app(handler));
    try {
      expect(await rawDelete(server.port, `${prefix}/v1/user/%2E`)).toBe(204);
      expect(await rawDelete(server.port, `${prefix}/v1/user/%2E%2E`)).toBe(204);
      expect(await rawDelete(server.port, `${prefix}/v1/user/x%2F..`)).toBe(204);
      expect(await uuids(store)).toEqual(["keep"]);
    } finally {
      await server.close();
    }
  });
});
