import { afterEach, describe, expect, it } from "vitest";
import { runModule } from "../integration-api/child-process.ts";
import { type LocalServer, startServer } from "../integration-api/local-server.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const printDrops =
  "onDrop: (drop) => console.log(JSON.stringify({ reason: drop.reason, count: drop.count }))";

describe("the audit client and process exit", () => {
  it("never holds the process open, and reports events still queued at exit", async () => {
    const placeholder = await startServer(() => {});
    await placeholder.close();
    const result = await runModule(`
      const { createAuditClient } = await import(src + "clients/audit/index.ts");
      const audit = createAuditClient({
        baseUrl: ${JSON.stringify(placeholder.url)},
        retry: { baseDelayMs: 60000, maxDelayMs: 60000 },
        ${printDrops},
      });
      audit.record({ action: "a" });
      audit.record({ action: "b" });
    `);
    expect(result).toMatchObject({ code: 0, stdout: '{"reason":"exit","count":2}\n' });
  });

  it("with flushOnExit, delivers what is queued before the process exits", async () => {
    const received: string[] = [];
    const server = await startServer((_request, response, body) => {
      received.push(body);
      response.writeHead(received.length === 1 ? 503 : 201).end();
    });
    servers.push(server);
    const result = await runModule(`
      const { createAuditClient } = await import(src + "clients/audit/index.ts");
      const audit = createAuditClient({
        baseUrl: ${JSON.stringify(server.url)},
        retry: { baseDelayMs: 100, maxDelayMs: 100 },
        flushOnExit: true,
        ${printDrops},
      });
      audit.record({ action: "a" });
    `);
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(received).toEqual(['{"action":"a"}', '{"action":"a"}']);
  });
});
