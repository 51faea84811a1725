// A soak test, left out of `npm run mutate` (vitest.mutate.config.ts): it takes seconds, and the
// faster tests in delivery.test.ts and audit-client.test.ts cover the same lines.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { type AuditDrop, createAuditClient } from "../../../src/clients/audit/index.ts";
import type { Handler } from "../integration-api/local-server.ts";
import { startServer } from "../integration-api/local-server.ts";
import { created, serve } from "./real-server.ts";

describe("delivery against a real server, at volume", () => {
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
    // A generous bound: on a loaded 2-core machine, delivery alone can take a minute.
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
    expect(Object.values(stats.droppedByReason)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(failures).toContain("NetworkError");
    expect(failures).toContain("HttpError");
  }, 300_000);
});
