// Two replicas deliver from one queue; one is killed mid-delivery while a third of the API's
// answers fail. Needs PostgreSQL, like pg-boss-audit.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { createPgBossAudit } from "../../../src/clients/audit-pg-boss/index.ts";
import { type NodeChild, startNode } from "../audit/spool/node-child.ts";
import { startServer } from "../integration-api/local-server.ts";
import { pgUrl, startBoss, until } from "./pg-boss-helpers.ts";

const events = 10_000;
const children: NodeChild[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

const replica = (url: string, schema: string, api: string) => `
  const { PgBoss } = await import("pg-boss");
  const { createPgBossAudit } = await import(src + "clients/audit-pg-boss/index.ts");
  const boss = new PgBoss({ connectionString: ${JSON.stringify(url)}, schema: ${JSON.stringify(schema)}, superviseIntervalSeconds: 1 });
  boss.on("error", () => {});
  await boss.start();
  const audit = await createPgBossAudit({
    boss, baseUrl: ${JSON.stringify(api)}, heartbeatSeconds: 10,
    retry: { baseDelayMs: 20, maxDelayMs: 200 }, onError() {},
  });
  await audit.work({ concurrency: 8, pollingIntervalSeconds: 0.5 });
  console.log("working");
`;

describe.runIf(pgUrl)("pg-boss delivery across replicas", () => {
  it("loses none of 10,000 events when a replica is killed mid-delivery and 30 % of answers fail", async () => {
    const accepted = new Map<string, number>();
    let requests = 0;
    const api = await startServer((_request, response, body) => {
      requests++;
      // Three answers in ten fail, spread evenly.
      if ((requests * 7) % 10 < 3) return void response.writeHead(503).end();
      accepted.set(body, (accepted.get(body) ?? 0) + 1);
      response.writeHead(201).end();
    });
    const { boss, schema, drop } = await startBoss(pgUrl as string);
    try {
      const audit = await createPgBossAudit({ boss, baseUrl: api.url, heartbeatSeconds: 10 });
      for (let from = 0; from < events; from += 200) {
        await Promise.all(
          Array.from({ length: 200 }, (_, index) =>
            audit.record({ action: "replica.test", description: String(from + index) }),
          ),
        );
      }
      const [first, second] = [0, 1].map(() =>
        startNode(replica(pgUrl as string, schema, api.url)),
      );
      children.push(first as NodeChild, second as NodeChild);
      await Promise.all(children.map((child) => child.line((line) => line === "working")));

      await until(() => accepted.size >= events * 0.3, "30 % delivered", 120_000);
      first?.kill("SIGKILL");
      await first?.exited;
      await until(() => accepted.size === events, "every event delivered", 180_000);

      const duplicates = [...accepted.values()].reduce((sum, count) => sum + count - 1, 0);
      console.log(
        `pg-boss, 2 replicas, one killed: ${events} events, ${events - accepted.size} lost, ${duplicates} delivered twice or more, ${requests} requests`,
      );
      expect(accepted.size).toBe(events);
      expect([...accepted.keys()].every((body) => body.startsWith('{"description":"'))).toBe(true);
    } finally {
      for (const child of children) child.kill("SIGKILL");
      await Promise.all(children.map((child) => child.exited));
      await drop();
      await api.close();
    }
  }, 400_000);
});
