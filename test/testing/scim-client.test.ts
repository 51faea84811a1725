import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectScim } from "../../src/testing/scim-client.ts";

describe("connectScim over the platform side's outbound layer", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url?.startsWith("/scim/v2/Moved")) {
        response.writeHead(302, { location: "/scim/v2/Users" }).end();
        return;
      }
      response
        .writeHead(200, { "content-type": "application/scim+json", etag: 'W/"1"' })
        .end(JSON.stringify({ seen: request.headers.authorization ?? null }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers a redirect as it came, not the page it points at: its status is what a check judges", async () => {
    const client = connectScim(base, { token: "t", timeoutMs: 5000 });
    const answer = await client({ method: "GET", path: "/Moved" });
    expect(answer.status).toBe(302);
    expect(answer.headers?.location).toBe("/scim/v2/Users");
  });

  it("sends the bearer token and reads the body and headers", async () => {
    const client = connectScim(base, { token: "t", timeoutMs: 5000 });
    const answer = await client({ method: "GET", path: "/Users" });
    expect(answer).toMatchObject({
      status: 200,
      body: { seen: "Bearer t" },
      headers: { contentType: "application/scim+json", etag: 'W/"1"' },
    });
  });

  it("marks an answer longer than 64 KiB as cut off, and only such an answer", async () => {
    const answering = (size: number) => ({
      fetch: async () =>
        new Response(JSON.stringify({ pad: "x".repeat(size) }), {
          headers: { "content-type": "application/scim+json" },
        }),
    });
    const long = await connectScim(answering(64 * 1024), { timeoutMs: 5000 })({
      method: "GET",
      path: "/Users",
    });
    expect(long).toMatchObject({ status: 200, cutOff: true });
    expect(long.body).toMatch(/cut off/);
    const short = await connectScim(answering(60 * 1024), { timeoutMs: 5000 })({
      method: "GET",
      path: "/Users",
    });
    expect(short.cutOff).toBeUndefined();
    expect(short.body).toMatchObject({ pad: expect.any(String) });
  });

  it("gives up on a handler that never answers, and says so", async () => {
    const never = { fetch: () => new Promise<Response>(() => {}) };
    const answer = await connectScim(never, { timeoutMs: 50 })({ method: "GET", path: "/Users" });
    expect(answer).toMatchObject({ error: "no answer within 50 ms", timedOut: true });
    const stop = new AbortController();
    const pending = connectScim(never, { timeoutMs: 5000 })(
      { method: "GET", path: "/Users" },
      stop.signal,
    );
    stop.abort();
    expect(await pending).toMatchObject({ error: "aborted" });
  });
});
