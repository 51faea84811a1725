// Runs against the server at PLATFORM_INTEGRATION_PG_URL (.ci/steps/audit-pg-boss.sh starts one).
// Without it the suite is skipped, unless PLATFORM_INTEGRATION_REQUIRE_PG=1 says it must run.
import { Client } from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AuditDeadLetter,
  createPgBossAudit,
  isConfigurationError,
} from "../../../src/clients/audit-pg-boss/index.ts";
import { type LocalServer, startServer } from "../integration-api/local-server.ts";
import { pgRequired, pgUrl, startBoss, until } from "./pg-boss-helpers.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function boss() {
  const started = await startBoss(pgUrl as string);
  cleanups.push(started.drop);
  return started;
}

async function server(
  answer: (body: string, count: number) => number | [number, Record<string, string>],
) {
  const received: string[] = [];
  const local: LocalServer = await startServer((_request, response, body) => {
    received.push(body);
    const result = answer(body, received.length);
    const [status, headers] = Array.isArray(result) ? result : [result, {}];
    response.writeHead(status, headers).end();
  });
  cleanups.push(() => local.close());
  return { url: local.url, received };
}

describe.runIf(pgUrl || pgRequired)("createPgBossAudit", () => {
  if (!pgUrl) {
    it("has a server to run against", () => {
      throw new Error(
        "PLATFORM_INTEGRATION_REQUIRE_PG=1, but PLATFORM_INTEGRATION_PG_URL is unset",
      );
    });
    return;
  }

  it("enqueues events and a worker delivers them, with their wire names", async () => {
    const api = await server(() => 201);
    const { boss: instance } = await boss();
    const audit = await createPgBossAudit({ boss: instance, baseUrl: api.url });
    // The Integration API's capabilities, as the in-process Audit client says.
    expect(audit.capabilities).toMatchObject({ audit: true, customMetrics: false });
    const id = await audit.record({ action: "user.login", ipAddress: "192.30.252.12" });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await audit.work({ pollingIntervalSeconds: 0.5 });
    await until(() => api.received.length === 1, "the delivery");
    expect(api.received).toEqual(['{"ip_address":"192.30.252.12","action":"user.login"}']);
    await audit.stopWork();
  });

  it("enqueues inside the caller's transaction: the event exists if and only if it commits", async () => {
    const api = await server(() => 201);
    const { boss: instance } = await boss();
    const audit = await createPgBossAudit({ boss: instance, baseUrl: api.url });
    const client = new Client({ connectionString: pgUrl });
    await client.connect();
    cleanups.push(() => client.end());
    const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };

    await client.query("BEGIN");
    await audit.record({ action: "report.export", description: "rolled back" }, { db });
    await client.query("ROLLBACK");
    await client.query("BEGIN");
    await audit.record({ action: "report.export", description: "committed" }, { db });
    // Not visible to the workers' own connections before the commit.
    expect(await instance.findJobs(audit.queue)).toEqual([]);
    await client.query("COMMIT");

    await audit.work({ pollingIntervalSeconds: 0.5 });
    await until(() => api.received.length === 1, "the delivery");
    await audit.stopWork();
    expect(api.received).toEqual(['{"description":"committed","action":"report.export"}']);
  });

  it("keeps a 4xx refusal as a dead letter, sent once, and retries an outage honouring Retry-After", async () => {
    const api = await server((body, count) =>
      body.includes("bad") ? 400 : count <= 2 ? [503, { "retry-after": "0" }] : 201,
    );
    const { boss: instance } = await boss();
    const letters: AuditDeadLetter[] = [];
    const errors: unknown[] = [];
    const audit = await createPgBossAudit({
      boss: instance,
      baseUrl: api.url,
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, // only Retry-After can make it quick
      onDeadLetter: (letter) => letters.push(letter),
      onError: (error) => errors.push(error),
    });
    await audit.record({ action: "good" });
    await audit.record({ action: "bad" });
    await audit.work({ concurrency: 1, pollingIntervalSeconds: 0.5 });
    await until(
      () =>
        api.received.filter((body) => body.includes("good")).length >= 2 && letters.length === 1,
      "both outcomes",
    );
    await until(
      () => api.received.at(-1)?.includes("good") === true && api.received.length >= 3,
      "the retry",
    );
    await audit.stopWork();

    expect(api.received.filter((body) => body.includes("bad"))).toHaveLength(1);
    const listed = await audit.deadLetters();
    expect(listed).toEqual([
      {
        id: letters[0]?.id,
        event: { action: "bad" },
        status: 400,
        reason: expect.stringContaining("400"),
        attempts: 1,
        deadAt: expect.any(Date),
      },
    ]);
    expect(letters).toEqual(listed);
    expect(errors.length).toBeGreaterThan(0);
  });

  it("retries a redirect retry.limit times, never following it, then keeps it as a dead letter", async () => {
    const api = await server(() => [302, { location: "http://127.0.0.1:1/elsewhere" }]);
    const { boss: instance } = await boss();
    const letters: AuditDeadLetter[] = [];
    const audit = await createPgBossAudit({
      boss: instance,
      baseUrl: api.url,
      retry: { limit: 1, baseDelayMs: 1, maxDelayMs: 1 },
      onError: () => {},
      onDeadLetter: (letter) => letters.push(letter),
    });
    await audit.record({ action: "moved" });
    await audit.work({ pollingIntervalSeconds: 0.5 });
    await until(() => letters.length === 1, "the dead letter");
    await audit.stopWork();
    expect(api.received).toHaveLength(2);
    expect(letters).toMatchObject([{ event: { action: "moved" }, status: 302, attempts: 2 }]);
    expect(await audit.deadLetters()).toEqual(letters);
  });

  it("refuses to start a worker that has no base URL, with the fix, once", async () => {
    const { boss: instance } = await boss();
    const previous = process.env.PLATFORM_INTEGRATIONAPI;
    delete process.env.PLATFORM_INTEGRATIONAPI;
    try {
      const audit = await createPgBossAudit({ boss: instance });
      const error = await audit.work().catch((caught: unknown) => caught);
      expect(isConfigurationError(error)).toBe(true);
      expect((error as Error).message).toContain("PLATFORM_INTEGRATIONAPI");
      // The events wait in the queue meanwhile.
      await audit.record({ action: "kept" });
      expect(await instance.findJobs(audit.queue)).toHaveLength(1);
    } finally {
      if (previous !== undefined) process.env.PLATFORM_INTEGRATIONAPI = previous;
    }
  });

  it("rejects an invalid event before it reaches the queue", async () => {
    const { boss: instance } = await boss();
    const audit = await createPgBossAudit({
      boss: instance,
      baseUrl: "http://127.0.0.1:1",
      actions: { a: "a" },
      maxEventBytes: 100,
    });
    await expect(audit.record({ action: "b" as "a" })).rejects.toThrow(TypeError);
    await expect(audit.record({ action: "a", description: "x".repeat(200) })).rejects.toThrow(
      RangeError,
    );
    expect(await instance.findJobs(audit.queue)).toEqual([]);
  });
});
