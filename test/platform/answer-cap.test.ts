// Both clients of a Provisioning API read an application's answer up to maxAnswerBytes: the body
// is for a report, and a server that sends a runaway body must not exhaust the sender's memory.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectOverNodeHttp } from "../../src/platform/node-http-client.ts";
import { maxAnswerBytes } from "../../src/platform/outbound.ts";
import {
  connectProvisioning,
  type ProvisioningApiClient,
} from "../../src/platform/provisioning-api-client.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

// Far more than any report needs; an uncapped reader would hold all of it.
const runawayBytes = 64 * 1024 * 1024;
const chunk = Buffer.alloc(64 * 1024, "x");

/** A server that answers 500 with a body of `runawayBytes`, written as the reader takes it. */
async function runawayServer() {
  const sent = { bytes: 0, finished: false };
  const server = createServer(async (request, response) => {
    for await (const _ of request);
    response.writeHead(500, { "content-type": "text/plain" });
    while (sent.bytes < runawayBytes && !response.destroyed) {
      sent.bytes += chunk.byteLength;
      if (!response.write(chunk)) {
        await Promise.race([once(response, "drain"), once(response, "close")]);
      }
    }
    if (!response.destroyed) {
      sent.finished = true;
      response.end();
    }
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, sent };
}

/** A JSON body just under the cap, which is read whole. */
async function largeJsonServer(bytes: number) {
  const body = JSON.stringify({ error: "x".repeat(bytes - 12) });
  const server = createServer(async (request, response) => {
    for await (const _ of request);
    response.writeHead(409, { "content-type": "application/json" }).end(body);
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, body };
}

const clients: [string, (url: string) => ProvisioningApiClient & { close?(): void }][] = [
  ["connectProvisioning (fetch)", (url) => connectProvisioning(url, { timeoutMs: 30_000 })],
  ["connectOverNodeHttp", (url) => connectOverNodeHttp(url, { timeoutMs: 30_000 })],
];

describe.each(clients)("%s: the answer's size cap", (_, connect) => {
  it("reads a runaway body up to maxAnswerBytes, reports its start and stops reading", async () => {
    const app = await runawayServer();
    const client = connect(app.url);
    try {
      const answer = await client({ method: "GET", path: "/v1/ping" });
      expect(answer.status).toBe(500);
      expect(answer.body).toBe(
        `${"x".repeat(2000)}… (cut off: the answer is longer than ${maxAnswerBytes} bytes)`,
      );
      expect(app.sent.finished).toBe(false);
    } finally {
      client.close?.();
    }
  });

  it("reads a body within the cap whole, and parses it", async () => {
    const app = await largeJsonServer(maxAnswerBytes);
    const client = connect(app.url);
    try {
      const answer = await client({ method: "POST", path: "/v1/user/create", body: "{}" });
      expect(answer).toMatchObject({ status: 409, body: JSON.parse(app.body) });
    } finally {
      client.close?.();
    }
  });
});

describe("connectProvisioning in-process: the answer's size cap", () => {
  it("stops pulling a handler's endless body past maxAnswerBytes", async () => {
    let pulled = 0;
    let cancelled = false;
    const client = connectProvisioning(
      {
        fetch: async () =>
          new Response(
            new ReadableStream<Uint8Array>({
              pull(controller) {
                pulled += chunk.byteLength;
                controller.enqueue(new Uint8Array(chunk));
              },
              cancel() {
                cancelled = true;
              },
            }),
            { status: 503 },
          ),
      },
      { timeoutMs: 30_000 },
    );
    const answer = await client({ method: "GET", path: "/v1/ping" });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^x{2000}… \(cut off/);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThanOrEqual(maxAnswerBytes + 2 * chunk.byteLength);
  });
});
