// Against the server at PLATFORM_INTEGRATION_PG_URL (.ci/steps/postgres.sh starts one), in a
// schema of its own, dropped at the end.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createPlatformSimulator } from "platform-integration/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.ts";
import { AppUserStore } from "./user-store.ts";

const url = process.env.PLATFORM_INTEGRATION_PG_URL;

describe.runIf(url)("examples/express-postgres", () => {
  const schema = `express_postgres_${process.pid}`;
  let pool: pg.Pool;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    await admin.end();
    pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
    const { app } = await createApp(pool);
    server = createServer(app).listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.close();
    await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool?.end();
  });

  const email = async (uuid: string) =>
    (await pool.query("SELECT email FROM users WHERE uuid = $1", [uuid])).rows[0]?.email;

  it("never stalls on a swap of two emails, and both users end with the right ones", async () => {
    const platform = createPlatformSimulator({ target: `${base}/ldap/auth` });
    platform.addUser({ uuid: "ann", username: "ann", email: "ann@acme.test" });
    platform.addUser({ uuid: "bob", username: "bob", email: "bob@acme.test" });
    expect((await platform.sync()).completed).toBe(true);
    const order = await fetch(`${base}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "ann", item: "book" }),
    });
    expect(order.status).toBe(201);

    platform.swapValues("email", "ann", "bob");
    const report = await platform.sync();
    expect([report.completed, report.stalled, report.remaining]).toEqual([true, undefined, 0]);
    expect([await email("ann"), await email("bob")]).toEqual(["bob@acme.test", "ann@acme.test"]);
    expect(await (await fetch(`${base}/admin/quarantine`)).json()).toEqual([]);
  });

  it("keeps a true duplicate until an admin frees the email, then retries it from the admin route", async () => {
    const platform = createPlatformSimulator({ target: `${base}/ldap/auth` });
    platform.addUser({ uuid: "carl", email: "shared@acme.test" });
    platform.addUser({ uuid: "dora", email: "shared@acme.test", password: "dora-secret" });
    expect((await platform.sync()).completed).toBe(true);
    const kept = await (await fetch(`${base}/admin/quarantine`)).json();
    expect(kept).toMatchObject([{ uuid: "dora", operation: "create", fields: ["email"] }]);
    expect(JSON.stringify(kept)).not.toContain("dora-secret");
    // Resolved outside the directory: carl's address is changed in the application's database.
    await pool.query("UPDATE users SET email = 'carl@acme.test' WHERE uuid = 'carl'");
    const retry = await fetch(`${base}/admin/quarantine/retry`, { method: "POST" });
    expect(await retry.json()).toEqual({ released: 1, kept: 0 });
    expect(await email("dora")).toBe("shared@acme.test");
  });

  it("deactivates a deleted user whose orders point at it", async () => {
    const platform = createPlatformSimulator({ target: `${base}/ldap/auth` });
    platform.addUser({ uuid: "erin", email: "erin@acme.test" });
    await platform.sync();
    await pool.query("INSERT INTO orders (user_uuid, item) VALUES ('erin', 'lamp')");
    platform.removeUser("erin");
    expect((await platform.sync()).completed).toBe(true);
    const { rows } = await pool.query("SELECT deactivated_at FROM users WHERE uuid = 'erin'");
    expect(rows[0]?.deactivated_at).toBeInstanceOf(Date);
    // Back in the directory without an email: the user it sends now, nothing of the old one.
    platform.addUser({ uuid: "erin", username: "erin2" });
    expect((await platform.sync()).completed).toBe(true);
    const { rows: again } = await pool.query(
      "SELECT username, email, deactivated_at FROM users WHERE uuid = 'erin'",
    );
    expect(again).toEqual([{ username: "erin2", email: null, deactivated_at: null }]);
  });

  // Attack finding 5. Catches: a kept record that awaits an email its holder freed between the
  // conflict and the record (the holder's step, on another replica, found no record to wake).
  it("wakes a kept user whose email was freed between its conflict and its record", async () => {
    const gated = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
    let open: () => void = () => {};
    let gate: Promise<void> | undefined;
    let paused: () => void = () => {};
    const pausing = new Promise<void>((resolve) => (paused = resolve));
    gated.on("connect", (client) => {
      const query = client.query.bind(client) as (text: string, values?: unknown[]) => unknown;
      // After its conflict, replica A's step waits here while replica B's step runs whole.
      Object.assign(client, {
        query: async (text: string, values?: unknown[]) => {
          const result = await query(text, values);
          if (gate !== undefined && text.startsWith("ROLLBACK TO SAVEPOINT")) {
            paused();
            await gate;
          }
          return result;
        },
      });
    });
    const a = new AppUserStore(gated);
    const b = new AppUserStore(pool);
    await b.writeQuarantined("create", { uuid: "rx", email: "rx@acme.test" });
    await b.writeQuarantined("create", { uuid: "ry", email: "rv@acme.test" });
    gate = new Promise((resolve) => (open = resolve));
    const stepOfX = a.writeQuarantined("modify", { uuid: "rx", email: "rv@acme.test" });
    await pausing;
    const stepOfY = await b.writeQuarantined("modify", { uuid: "ry", email: "ry@acme.test" });
    expect(stepOfY.wakes).toEqual([]);
    open();
    const step = await stepOfX;
    expect([step.outcome, step.wakes]).toEqual(["kept", ["rx"]]);
    expect((await a.releaseQuarantined("rx")).outcome).toBe("released");
    expect(await email("rx")).toBe("rv@acme.test");
    await gated.end();
  });
});
