import { describe, expect, it } from "vitest";
import {
  allowAddresses,
  createProvisioningHandler,
  MemoryUserStore,
} from "../../src/provisioning/index.ts";

const base = "http://app.internal:3000";

function post(
  path: string,
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
) {
  return new Request(`${base}${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    duplex: "half",
  } as RequestInit);
}

/** A body that arrives in `count` chunks of `size` bytes, recording how far it was read. */
function chunked(count: number, size: number) {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === count) controller.close();
      else {
        sent++;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      }
    },
  });
  return { stream, sent: () => sent };
}

describe("fetch", () => {
  it("serves the API to Web Requests", async () => {
    const store = new MemoryUserStore();
    const { fetch } = createProvisioningHandler({ store, basePath: "/ldap", reset: true });
    expect((await fetch(new Request(`${base}/ldap/v1/ping`))).status).toBe(204);
    const created = await fetch(post("/ldap/v1/user/create", '{"uuid":"u1","username":"bob"}'));
    expect([created.status, await created.text()]).toEqual([201, ""]);
    expect(await store.get("u1")).toEqual({ uuid: "u1", username: "bob" });
    const deleted = await fetch(new Request(`${base}/ldap/v1/user/u1`, { method: "DELETE" }));
    expect(deleted.status).toBe(204);
    const missing = await fetch(new Request(`${base}/ldap/v2`));
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await missing.json()).toMatchObject({ error: "not_found" });
    const head = await fetch(new Request(`${base}/ldap/v1/reset`, { method: "HEAD" }));
    expect([head.status, head.headers.get("allow"), await head.text()]).toEqual([405, "POST", ""]);
  });

  it("answers 413 from Content-Length, or once a streamed body passes the limit", async () => {
    const store = new MemoryUserStore();
    const { fetch } = createProvisioningHandler({ store, bodyLimit: 1000 });
    const declared = await fetch(post("/v1/user/create", "{}", { "content-length": "1001" }));
    expect(declared.status).toBe(413);
    const body = chunked(100, 300);
    const streamed = await fetch(post("/v1/user/create", body.stream));
    expect([streamed.status, ((await streamed.json()) as { error: string }).error]).toEqual([
      413,
      "payload_too_large",
    ]);
    expect(body.sent()).toBeLessThan(10);
    const several = chunked(3, 300);
    const spaced = await fetch(post("/v1/user/create", several.stream));
    expect(spaced.status).toBe(400);
  });

  it("joins a body that arrives in chunks", async () => {
    const store = new MemoryUserStore();
    const { fetch } = createProvisioningHandler({ store });
    const text = JSON.stringify({ uuid: "u1", full_name: "x".repeat(5000) });
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 1000)
          controller.enqueue(bytes.slice(at, at + 1000));
        controller.close();
      },
    });
    expect((await fetch(post("/v1/user/create", stream))).status).toBe(201);
    expect((await store.get("u1"))?.fullName).toHaveLength(5000);
  });

  it("takes the peer address from its second argument: explicit, Deno.serve's or Bun.serve's", async () => {
    const { fetch } = createProvisioningHandler({
      store: new MemoryUserStore(),
      authorize: allowAddresses(["10.0.0.0/8"]),
    });
    const ping = () => new Request(`${base}/v1/ping`);
    expect((await fetch(ping())).status).toBe(403);
    expect((await fetch(ping(), { remoteAddress: "10.1.2.3" })).status).toBe(204);
    expect((await fetch(ping(), { remoteAddr: { hostname: "10.9.9.9", port: 1 } })).status).toBe(
      204,
    );
    const bunServer = {
      requestIP(this: unknown, request: Request) {
        return this === bunServer && request.url.endsWith("/v1/ping")
          ? { address: "::ffff:10.0.0.1", family: "IPv6", port: 1 }
          : null;
      },
    };
    expect((await fetch(ping(), bunServer)).status).toBe(204);
    expect((await fetch(ping(), { remoteAddress: "192.168.0.1" })).status).toBe(403);
  });

  it("does not look the peer up when nothing needs it: no guard, no OpenTelemetry SDK", async () => {
    const { fetch } = createProvisioningHandler({ store: new MemoryUserStore() });
    let lookups = 0;
    const bunServer = {
      requestIP: () => {
        lookups++;
        return { address: "10.0.0.1", family: "IPv4", port: 1 };
      },
    };
    expect((await fetch(new Request(`${base}/v1/ping`), bunServer)).status).toBe(204);
    expect(lookups).toBe(0);
  });

  it("reads headers and the peer from the Node request @hono/node-server passes beside it", async () => {
    const { fetch } = createProvisioningHandler({
      store: new MemoryUserStore(),
      authorize: allowAddresses(["10.0.0.0/8"]),
    });
    const node = (address: string, rawHeaders: string[] = []) => ({
      incoming: { rawHeaders, socket: { remoteAddress: address } },
      outgoing: {},
    });
    const create = () => post("/v1/user/create", '{"uuid":"u1"}');
    expect((await fetch(create(), node("10.1.2.3"))).status).toBe(201);
    expect((await fetch(create(), node("192.168.0.1"))).status).toBe(403);
    const fromPage = await fetch(create(), node("10.1.2.3", ["Origin", "https://evil.example"]));
    expect(((await fromPage.json()) as { message: string }).message).toContain("browser");
  });
});
