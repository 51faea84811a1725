import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type AuditDrop, createAuditClient } from "../../../src/clients/audit/index.ts";
import { type Handler, type LocalServer, startServer } from "../integration-api/local-server.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler, port?: number): Promise<LocalServer> {
  const server = await startServer(handler, undefined, port);
  servers.push(server);
  return server;
}

const created: Handler = (_request, response) => {
  response.writeHead(201, { "content-type": "text/plain; charset=utf-8", "content-length": "0" });
  response.end();
};

describe("delivery against a real server", () => {
  it("sends with bounded concurrency over keep-alive connections", async () => {
    const total = 300;
    let answered = 0;
    let peak = 0;
    const held: (() => void)[] = [];
    const server = await serve((request, response, body) => {
      held.push(() => created(request, response, body));
      peak = Math.max(peak, held.length);
      // Holds answers until the client has all it may send in flight, then a little longer, so
      // that a client sending more than its concurrency would be seen doing it.
      if (held.length === Math.min(3, total - answered)) {
        setTimeout(() => {
          answered += held.length;
          for (const answer of held.splice(0)) answer();
        }, 2);
      }
    });
    const audit = createAuditClient({ baseUrl: server.url, concurrency: 3 });
    for (let index = 0; index < total; index++)
      audit.record({ action: "load.test", description: `event ${index}` });
    expect(await audit.flush()).toBe(true);
    expect(audit.stats().delivered).toBe(total);
    expect(peak).toBe(3);
    // Keep-alive: a few connections for 300 events (fetch may open a spare while one is released).
    expect(server.connections()).toBeLessThanOrEqual(10);
  });

  it("delivers 10,000 events at least once through refused connections, then a third of requests failing, within its memory bound", async () => {
    // A port that refuses connections until a server starts on it.
    const placeholder = await startServer(created);
    const port = Number(new URL(placeholder.url).port);
    await placeholder.close();

    const events = Array.from({ length: 10_000 }, (_, index) => ({
      action: "test.event",
      description: `event ${index}`,
    }));
    // The bounds fit these events exactly: an accounting leak would overflow them and drop events.
    const totalBytes = events.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    const drops: AuditDrop[] = [];
    const failures: string[] = [];
    const audit = createAuditClient({
      baseUrl: `http://127.0.0.1:${port}`,
      maxQueueEvents: events.length,
      maxQueueBytes: totalBytes,
      retry: { baseDelayMs: 1, maxDelayMs: 10 },
      onDrop: (drop) => drops.push(drop),
      onError: (error) => failures.push((error as Error).name),
    });
    let peakEvents = 0;
    let peakBytes = 0;
    const sample = () => {
      const { queued, inFlight, bytes } = audit.stats();
      peakEvents = Math.max(peakEvents, queued + inFlight);
      peakBytes = Math.max(peakBytes, bytes);
    };

    const received = new Set<string>();
    let requests = 0;
    const flaky: Handler = (request, response, body) => {
      sample();
      if (++requests % 3 === 0) {
        response.writeHead(500).end();
        return;
      }
      received.add(JSON.parse(body).description);
      created(request, response, body);
    };

    for (let batch = 0; batch < 20; batch++) {
      for (const event of events.slice(batch * 500, (batch + 1) * 500)) audit.record(event);
      sample();
      if (batch === 7) await serve(flaky, port);
      await sleep(5);
    }
    expect(await audit.flush({ timeoutMs: 240_000 })).toBe(true);

    expect(drops).toEqual([]);
    expect(received.size).toBe(events.length);
    expect(peakEvents).toBeLessThanOrEqual(events.length);
    expect(peakBytes).toBeLessThanOrEqual(totalBytes);
    const stats = audit.stats();
    expect(stats).toMatchObject({
      queued: 0,
      inFlight: 0,
      bytes: 0,
      delivered: events.length,
      dropped: 0,
      retried: failures.length,
      lastError: { message: expect.stringMatching(/audit\/v1\/event/), at: expect.any(String) },
    });
    expect(Object.values(stats.droppedByReason)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(failures).toContain("NetworkError");
    expect(failures).toContain("HttpError");
  }, 300_000);
});

describe("redirects", () => {
  it.each([301, 302, 303, 307, 308])(
    "never follows a %i: the event is retried retry.limit times, then dropped as redirected",
    async (status) => {
      const seen: string[] = [];
      const target = await serve((request, response, body) => {
        seen.push(`${request.method} target`);
        created(request, response, body);
      });
      const server = await serve((request, response) => {
        seen.push(`${request.method} ${request.url}`);
        response.writeHead(status, { location: `${target.url}/audit/v1/event` }).end();
      });
      const drops: AuditDrop[] = [];
      const audit = createAuditClient({
        baseUrl: server.url,
        retry: { limit: 2, baseDelayMs: 1, maxDelayMs: 2 },
        onDrop: (drop) => drops.push(drop),
      });
      audit.record({ action: "user.login" });
      expect(await audit.flush()).toBe(true);
      expect(seen).toEqual(Array(3).fill("POST /audit/v1/event"));
      expect(drops).toMatchObject([
        { reason: "redirected", count: 1, events: [{ action: "user.login" }], error: { status } },
      ]);
      expect(audit.stats()).toMatchObject({ delivered: 0, dropped: 1, queued: 0, inFlight: 0 });
    },
  );
});
