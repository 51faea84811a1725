// The command line of every example server, on Node, Bun and Deno: PORT (default 3000, 0 picks
// a free port), HOST (default: every interface), DATABASE_URL (a postgres:// URL) or
// DATABASE_FILE (a SQLite file); default: users in memory. READ_USER_ROUTE=1 also serves
// GET /v1/user/:uuid for `conformance --read-user`, a test aid (off by default). SCIM_TOKEN also
// serves SCIM 2.0 at /scim/v2 from the same store, for identity providers holding that bearer
// token. Prints the APIs' URLs and stops gracefully on SIGTERM and SIGINT.
import process from "node:process";
import { MemoryUserStore } from "platform-integration/provisioning";
import type { RunningServer, Start, StartOptions } from "./serve.ts";

/** A store and how to release it. */
export interface OpenedStore {
  store: StartOptions["store"];
  /** Where the users are, for the startup line. */
  description: string;
  close(): void | Promise<void>;
}

/**
 * The PostgreSQL store when `databaseUrl` is set, else the SQLite store when `databaseFile` is,
 * to keep users across restarts in a real database; else a {@link MemoryUserStore}, whose users
 * go with the process.
 */
export async function openUserStore(
  databaseFile: string | undefined,
  databaseUrl?: string,
): Promise<OpenedStore> {
  if (databaseUrl) {
    // Loaded only when asked for: pg is an optional peer dependency of the SDK.
    const [{ default: pg }, { PostgresUserStore }] = await Promise.all([
      import("pg"),
      import("platform-integration/postgres"),
    ]);
    const pool = new pg.Pool({ connectionString: databaseUrl });
    // An idle connection that breaks (a server restart) emits "error" on the pool, which would
    // end the process without a listener; the pool drops it and opens another when needed.
    pool.on("error", () => {});
    const store = new PostgresUserStore({ pool });
    try {
      await store.migrate();
    } catch (error) {
      await pool.end();
      throw error;
    }
    const { host, pathname } = new URL(databaseUrl);
    return {
      store,
      // Host and database only: the URL may carry a password.
      description: `in PostgreSQL at ${host}${pathname}`,
      close: () => pool.end(),
    };
  }
  if (!databaseFile) return { store: new MemoryUserStore(), description: "in memory", close() {} };
  // Loaded only when asked for, so that runtimes without node:sqlite still run the rest.
  const { SqliteUserStore } = await import("platform-integration/sqlite");
  const store = new SqliteUserStore(databaseFile);
  return { store, description: `in the SQLite file ${databaseFile}`, close: () => store.close() };
}

/** Runs `start` with the settings from the environment until SIGTERM or SIGINT. */
export async function runFromCommandLine(start: Start): Promise<void> {
  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(
      `PORT must be a port number from 0 (any free port) to 65535, not "${process.env.PORT}".`,
    );
    process.exitCode = 2;
    return;
  }
  let users: OpenedStore;
  try {
    users = await openUserStore(process.env.DATABASE_FILE, process.env.DATABASE_URL);
  } catch (error) {
    console.error(`The store did not open: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
    return;
  }
  let server: RunningServer;
  try {
    server = await start({
      port,
      host: process.env.HOST || undefined,
      store: users.store,
      readUserRoute: process.env.READ_USER_ROUTE === "1",
      scimToken: process.env.SCIM_TOKEN || undefined,
    });
  } catch (error) {
    await users.close();
    // EADDRINUSE and the like: the reason is all a user needs.
    console.error(`The server did not start: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
    return;
  }
  const stop = (signal: string) => {
    // A second signal, of either kind, ends the process at once.
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
    console.log(`${signal}: answering the requests under way, then stopping`);
    server.close().then(
      async () => {
        await users.close();
        console.log("Stopped.");
      },
      (error: unknown) => {
        console.error("The server did not stop cleanly:", error);
        process.exitCode = 1;
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  console.log(`Provisioning API at ${server.url}, users ${users.description}`);
  if (process.env.SCIM_TOKEN) {
    // The token is not printed: it is a secret, and the one who set it has it.
    const scim = `${new URL(server.url).origin}/scim/v2`;
    console.log(`SCIM 2.0 at ${scim}, same users`);
    console.log(
      `Check it with: npx platform-integration conformance --scim ${scim} (token from $SCIM_TOKEN)`,
    );
  }
  const readUser = `${server.url}/v1/user/{uuid}`;
  if (process.env.READ_USER_ROUTE === "1") {
    console.log(`Read route (a test aid, READ_USER_ROUTE=1): ${readUser}`);
    console.log(
      `Check it with: npx platform-integration conformance ${server.url} --read-user "${readUser}"`,
    );
  } else {
    console.log(`Check it with: npx platform-integration conformance ${server.url}`);
  }
}
