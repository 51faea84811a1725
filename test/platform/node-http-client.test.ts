// The directory sync's HTTP client against real servers on loopback: what it sends, what it makes
// of an answer, and each way a call can fail without an answer.
import { getEventListeners, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectOverNodeHttp } from "../../src/platform/node-http-client.ts";
import { serveSelfSignedForEachTest } from "../support/self-signed-server.ts";

const startSelfSigned = serveSelfSignedForEachTest();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

/** A server that records each request (with its body and connection) and answers with `answer`. */
async function serve(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const received: {
    method: string | undefined;
    url: string | undefined;
    headers: IncomingMessage["headers"];
    body: string;
  }[] = [];
  let connections = 0;
  const server = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    received.push({ method: request.method, url: request.url, headers: request.headers, body });
    answer(request, response);
  });
  server.on("connection", () => connections++);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/base/`, received, connections: () => connections };
}

describe("connectOverNodeHttp", () => {
  it("sends JSON bodies under the base path, and returns the status and the parsed body", async () => {
    const app = await serve((_, response) =>
      response.writeHead(409, { "content-type": "application/json" }).end('{"error":"conflict"}'),
    );
    const client = connectOverNodeHttp(app.url, { timeoutMs: 5_000 });
    try {
      const body = JSON.stringify({ uuid: "u1", first_name: "Zoë" });
      const started = performance.now();
      const answer = await client({ method: "POST", path: "/v1/user/create", body });
      const elapsed = performance.now() - started;
      expect(answer).toMatchObject({ status: 409, body: { error: "conflict" } });
      // The call's own time in milliseconds: within the time the caller waited.
      expect(answer.durationMs).toBeGreaterThanOrEqual(0);
      expect(answer.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed * 10) / 10);
      expect(app.received).toEqual([
        expect.objectContaining({ method: "POST", url: "/base/v1/user/create", body }),
      ]);
      expect(app.received[0]?.headers).toMatchObject({
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      });
    } finally {
      client.close();
    }
  });

  it("sends one message after another on one kept-alive connection, and close lets it go", async () => {
    const app = await serve((_, response) => response.writeHead(204).end());
    const client = connectOverNodeHttp(app.url, { timeoutMs: 5_000 });
    for (let index = 0; index < 3; index++) {
      await expect(client({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
        status: 204,
      });
    }
    expect(app.connections()).toBe(1);
    expect(app.received[0]?.headers["content-type"]).toBeUndefined();
    const server = servers[0] as Server;
    const closed = once(server, "close");
    client.close();
    // With the client's socket gone, the server can close without forcing it.
    server.close();
    servers.length = 0;
    await closed;
  });

  it("times the call out when no answer comes, saying after how long", async () => {
    const app = await serve(() => undefined);
    const client = connectOverNodeHttp(app.url, { timeoutMs: 50 });
    try {
      const answer = await client({ method: "GET", path: "/v1/ping" });
      expect(answer).toEqual({
        error: "no answer within 50 ms",
        timedOut: true,
        durationMs: expect.any(Number),
      });
      expect(answer.durationMs).toBeGreaterThanOrEqual(45);
    } finally {
      client.close();
    }
  });

  it("ends the request in flight when aborted, says so, and says when nothing listens", async () => {
    let closed: Promise<unknown> | undefined;
    const app = await serve((_request, response) => {
      closed = once(response, "close");
    });
    // Far beyond the test's own time-out: only the abort can end this call.
    const client = connectOverNodeHttp(app.url, { timeoutMs: 600_000 });
    const controller = new AbortController();
    const pending = client({ method: "GET", path: "/v1/ping" }, controller.signal);
    while (closed === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).resolves.toMatchObject({ error: "aborted" });
    // The application sees the connection go, rather than answering a request nobody awaits.
    await closed;
    client.close();

    const nowhere = connectOverNodeHttp("http://127.0.0.1:1", { timeoutMs: 5_000 });
    await expect(nowhere({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    nowhere.close();
  });

  it("sends nothing once the signal is aborted", async () => {
    const app = await serve((_request, response) => response.writeHead(204).end());
    // Far beyond the test's own time-out: the call must end because the signal is aborted.
    const client = connectOverNodeHttp(app.url, { timeoutMs: 600_000 });
    try {
      await expect(
        client({ method: "GET", path: "/v1/ping" }, AbortSignal.abort()),
      ).resolves.toMatchObject({ error: "aborted" });
      await expect(client({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
        status: 204,
      });
      expect(app.received).toHaveLength(1);
    } finally {
      client.close();
    }
  });

  it("listens to a signal once however many calls carry it, and lets go of it on close", async () => {
    const app = await serve((_request, response) => response.writeHead(204).end());
    const client = connectOverNodeHttp(app.url, { timeoutMs: 5_000 });
    const { signal } = new AbortController();
    for (let call = 0; call < 3; call++) {
      await expect(client({ method: "GET", path: "/v1/ping" }, signal)).resolves.toMatchObject({
        status: 204,
      });
    }
    expect(getEventListeners(signal, "abort")).toHaveLength(1);
    client.close();
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("speaks TLS to an https:// target, checks its certificate, and says how to trust it", async () => {
    const { url } = await startSelfSigned();
    const client = connectOverNodeHttp(url, { timeoutMs: 5_000 });
    try {
      // Plain HTTP to a TLS port would fail otherwise (a reset or a parse error).
      await expect(client({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
        error: expect.stringMatching(
          /self[- ]signed certificate.*: the application's certificate is not trusted; pass its CA certificate \(targetTls\.ca, sync --target-ca FILE\)$/,
        ),
        // The next cycle would meet the same certificate: the sync stops instead.
        fatal: true,
      });
    } finally {
      client.close();
    }
  });

  it("trusts the certificates it is given for an https:// target, and only for one", async () => {
    const { url, cert } = await startSelfSigned();
    const client = connectOverNodeHttp(url, {
      timeoutMs: 5_000,
      ca: [cert],
    });
    try {
      await expect(client({ method: "GET", path: "/v1/ping" })).resolves.toMatchObject({
        status: 204,
      });
    } finally {
      client.close();
    }
    expect(() =>
      connectOverNodeHttp("http://127.0.0.1:1", { timeoutMs: 5_000, ca: [cert] }),
    ).toThrow(new TypeError("targetTls.ca is for an https:// target, not http://127.0.0.1:1"));
  });

  it("refuses a URL it cannot use, at once", () => {
    expect(() => connectOverNodeHttp("not a url", { timeoutMs: 5_000 })).toThrow(
      /^The Provisioning API's URL /,
    );
  });
});
