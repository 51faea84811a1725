import { randomUUID } from "node:crypto";
import pg from "pg";
import { PgBoss } from "pg-boss";

/** The server .ci/steps/audit-pg-boss.sh starts; the suite is skipped without it, unless required. */
export const pgUrl = process.env.PLATFORM_INTEGRATION_PG_URL;
export const pgRequired = process.env.PLATFORM_INTEGRATION_REQUIRE_PG === "1";

/**
 * A pg-boss instance in a schema of its own, so that tests never share queues (the URL may point
 * at a developer's database). `drop()` stops it and removes the schema.
 */
export async function startBoss(url: string, schema = `pi_audit_${randomUUID().slice(0, 8)}`) {
  const boss = new PgBoss({ connectionString: url, schema, superviseIntervalSeconds: 1 });
  boss.on("error", (error) => console.error("pg-boss:", error));
  await boss.start();
  return {
    boss,
    schema,
    async drop() {
      await boss.stop({ graceful: false, close: true });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** Resolves once `check` holds, polling every 50 ms; rejects after `timeoutMs` with `what`. */
export async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
