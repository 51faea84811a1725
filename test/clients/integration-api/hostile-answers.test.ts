// Answers a broken or hostile Integration API may send: too long, never ending, nested without
// end; and a script that awaits a call while the API is down. Each test names the wrong
// implementation it catches.
import { afterEach, describe, expect, it } from "vitest";
import { normalizeOptions } from "../../../src/clients/integration-api/client-options.ts";
import {
  isCallTimeoutError,
  isHttpError,
  isResponseShapeError,
} from "../../../src/clients/integration-api/errors.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";
import { createVersionClient } from "../../../src/clients/version/index.ts";
import { startScript } from "./child-process.ts";
import { type Handler, type LocalServer, startServer } from "./local-server.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler): Promise<LocalServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}

const kib = 1024;
const currentVersion = {
  version: "1.0.0",
  release_sequence: 1,
  release_notes: "",
  release_date: "2015-12-01T00:00:00.0000000Z",
  install_date: "2015-12-01T00:00:00.0000000Z",
};

/**
 * A server that streams a JSON object of `total` bytes in 64 KiB chunks without a Content-Length,
 * each chunk written only once the previous one was taken; `sent()` counts what it wrote.
 */
async function streamingServer(total: number, status = 200) {
  let sent = 0;
  let requests = 0;
  const server = await serve((_request, response) => {
    requests++;
    response.writeHead(status, { "content-type": "application/json" });
    const prefix = '{"version":"';
    const suffix = '","releaseSequence":1}';
    let written = prefix.length;
    response.write(prefix);
    const chunk = "a".repeat(64 * kib);
    const writeMore = () => {
      while (written + chunk.length + suffix.length < total) {
        written += chunk.length;
        sent = Math.max(sent, written);
        if (!response.write(chunk)) return void response.once("drain", writeMore);
      }
      response.end(suffix);
    };
    response.on("error", () => undefined);
    writeMore();
  });
  return { server, sent: () => sent, requests: () => requests };
}

describe("the size of an answer", () => {
  it("defaults to 4 MiB and refuses a cap below one byte", () => {
    expect(normalizeOptions({}).maxResponseBytes).toBe(4 * 1024 * kib);
    expect(() => normalizeOptions({ maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
  });

  // Wrong implementation: response.text() (reads all 64 MiB, then resolves the version).
  it("stops reading a 2xx answer at maxResponseBytes, while it streams, with a ResponseShapeError", async () => {
    const { server, sent, requests } = await streamingServer(64 * 1024 * kib);
    const version = createVersionClient({
      api: "integration",
      baseUrl: server.url,
      maxResponseBytes: 256 * kib,
    });
    const error = await version.current().catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
    expect((error as Error).message).toContain("maxResponseBytes (262144 bytes)");
    expect(Buffer.byteLength((error as { body: string }).body)).toBe(256 * kib);
    // Not retried: the same answer would come again.
    expect(requests()).toBe(1);
    // The socket closed long before the server could write it all.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent()).toBeLessThan(16 * 1024 * kib);
  });

  // Wrong implementation: a cap checked only after the whole body was read.
  it("does not read an answer whose Content-Length is over the cap", async () => {
    let requests = 0;
    const server = await serve((_request, response) => {
      requests++;
      response.writeHead(200, { "content-type": "application/json", "content-length": 1_000_000 });
      response.write('{"version":"');
      // The rest never comes: a reader that waited for it would hit the time-out instead.
    });
    const error = await createVersionClient({
      api: "integration",
      baseUrl: server.url,
      maxResponseBytes: 1000,
      timeoutMs: 60_000,
    })
      .current()
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
    expect(requests).toBe(1);
  });

  // Wrong implementation: a cap that turns an error status into a ResponseShapeError (and so
  // stops the retries of a 503).
  it("keeps the first bytes of a long error answer on HttpError.body, and retries a 503 as usual", async () => {
    const { server, requests } = await streamingServer(2 * 1024 * kib, 503);
    const error = await createIntegrationApi({
      baseUrl: server.url,
      maxResponseBytes: 100,
      retry: { limit: 1, baseDelayMs: 1 },
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isHttpError(error)).toBe(true);
    expect((error as { status: number }).status).toBe(503);
    expect((error as { body: string }).body).toBe(`{"version":"${"a".repeat(88)}`);
    expect(requests()).toBe(2);
  });

  // Wrong implementation: a cap that cuts a multi-byte character in two within the limit.
  it("reads an answer of exactly maxResponseBytes whole, multi-byte characters included", async () => {
    const body = JSON.stringify({ ...currentVersion, version: "é".repeat(100) });
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(body);
    });
    const current = await createVersionClient({
      api: "integration",
      baseUrl: server.url,
      maxResponseBytes: Buffer.byteLength(body),
    }).current();
    expect(current.version).toBe("é".repeat(100));
  });
});

describe("an answer that never ends", () => {
  // Wrong implementation: the attempt's timer cleared once the headers arrive.
  it("is cut off by the attempt's time-out while its body trickles", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"version":"');
      const timer = setInterval(() => response.write("a"), 20);
      response.on("close", () => clearInterval(timer));
    });
    const error = await createIntegrationApi({ baseUrl: server.url, timeoutMs: 300 })
      .request("GET", "/version/v1/current", { retry: false })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
  });

  // Wrong implementation: a body read that relies on fetch honouring its signal.
  it("is cut off by the call's total time-out even from an injected fetch that ignores its signal", async () => {
    const fetch = async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"version":"'));
            // Never closes, never errors.
          },
        }),
        { status: 200, headers: { "content-type": "application/json" } },
      );
    const error = await createIntegrationApi({
      baseUrl: "http://platform.invalid",
      fetch,
      timeoutMs: 10_000,
      totalTimeoutMs: 300,
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
  });
});

describe("an answer nested without end", () => {
  // Wrong implementation: JSON.parse alone, which keeps the whole depth under `extra`.
  it("rejects 2,000,000 levels with a ResponseShapeError, not a value that cannot be serialized", async () => {
    const depth = 2_000_000;
    const body = `{"version":"1.0.0","releaseSequence":1,"deep":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(body);
    });
    const error = await createVersionClient({ api: "integration", baseUrl: server.url })
      .current()
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
    expect((error as Error).message).toContain("nests deeper than 64 levels");
  });

  // Wrong implementation: a depth limit so low that real records' extras are refused.
  it("keeps a value nested a few levels under extra", async () => {
    const deep = { a: { b: { c: [[{ d: [1, 2, { e: "f" }] }]] } } };
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ...currentVersion, deep }));
    });
    const current = await createVersionClient({
      api: "integration",
      baseUrl: server.url,
    }).current();
    expect(current.extra).toEqual({ deep });
  });
});

describe("a script that awaits a call while the API is down", () => {
  // Wrong implementation: the backoff's timer unref'd, so Node ends the process mid-retry with
  // exit code 13 ("unsettled top-level await") and prints nothing.
  it("stays alive through the retries and sees the call settle", async () => {
    const script = await startScript(`
      import { createVersionClient } from "platform-integration/version";
      try {
        await createVersionClient({
          api: "integration",
          baseUrl: "http://127.0.0.1:9",
          retry: { limit: 2, baseDelayMs: 200 },
        }).current();
        console.log("resolved");
      } catch (error) {
        console.log(\`rejected \${error.name} after \${error.attempts} attempts\`);
      }
    `);
    expect(await script.exited).toBe(0);
    expect(script.stdout().trim()).toBe("rejected NetworkError after 3 attempts");
  });
});
