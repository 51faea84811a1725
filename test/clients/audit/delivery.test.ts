import { describe, expect, it } from "vitest";
import { type AuditDrop, createAuditClient } from "../../../src/clients/audit/index.ts";
import { created, serve } from "./real-server.ts";

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

describe("configuration errors against a real server", () => {
  it("reports tls with an http: URL once, sends nothing, and keeps the events", async () => {
    let requests = 0;
    const server = await serve((request, response, body) => {
      requests++;
      created(request, response, body);
    });
    const errors: unknown[] = [];
    const audit = createAuditClient({
      baseUrl: server.url,
      tls: { rejectUnauthorized: false },
      onError: (error) => errors.push(error),
      onDrop: () => {},
    });
    for (let index = 0; index < 10; index++) audit.record({ action: "a" });
    expect(await audit.flush({ timeoutMs: 60_000 })).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: "ConfigurationError" });
    expect(String(errors[0])).toContain("tls option applies to https: URLs");
    expect(requests).toBe(0);
    const { queued, inFlight } = audit.stats();
    expect(queued + inFlight).toBe(10);
    await audit.close({ timeoutMs: 0 });
  });
});
