// An Express application on PostgreSQL whose users table has a unique email and whose orders point
// at users: the Provisioning API with the quarantine, so that a swap of two emails in the directory
// never stalls it, and an admin route that lists and retries what the quarantine keeps.
// Run: DATABASE_URL=postgres://... PORT=3000 node examples/express-postgres/app.ts
import { createServer } from "node:http";
import express from "express";
import pg from "pg";
import { toNodeErrorHandler, toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { AppUserStore } from "./user-store.ts";

/** The application over a pool whose search_path holds its tables. */
export async function createApp(pool: pg.Pool) {
  const store = new AppUserStore(pool);
  await store.migrate();
  const provisioning = createProvisioningHandler({
    store,
    quarantine: true,
    onQuarantine: ({ type, pending }) => {
      if (type === "kept")
        console.warn(`kept ${pending.operation} of ${pending.uuid}: ${pending.reason}`);
    },
  });
  const app = express();
  app.disable("x-powered-by");
  app.use("/ldap/auth", toNodeHandler(provisioning), toNodeErrorHandler(provisioning));
  app.use(express.json());

  // Admin routes: put them behind your own authentication.
  app.get("/admin/quarantine", async (_req, res) => {
    res.json(await provisioning.quarantined());
  });
  app.post("/admin/quarantine/retry", async (_req, res) => {
    res.json(await provisioning.retryQuarantined());
  });

  app.post("/orders", async (req, res) => {
    const { user, item } = req.body as { user: string; item: string };
    const { rows } = await pool.query(
      "INSERT INTO orders (user_uuid, item) VALUES ($1, $2) RETURNING id",
      [user, item],
    );
    res.status(201).json(rows[0]);
  });
  return { app, store, provisioning };
}

if (import.meta.main) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  const { app } = await createApp(pool);
  const server = createServer(app).listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
    console.log(
      `Provisioning API at http://127.0.0.1:${(server.address() as { port: number }).port}/ldap/auth`,
    );
  });
  process.once("SIGTERM", () => server.close(() => void pool.end()));
}
