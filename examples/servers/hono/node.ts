// The Hono application on Node, through @hono/node-server.
// Run: npm run example:hono (PORT, HOST and DATABASE_FILE as in ../main.ts).
import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { runFromCommandLine } from "../main.ts";
import { listen, type StartOptions } from "../serve.ts";
import { createApp } from "./app.ts";

/** Serves the Hono application on node:http. */
export function start(options: StartOptions) {
  const server = createAdaptorServer({ fetch: createApp(options).fetch }) as Server;
  return listen(server, options, "/ldap/auth");
}

if (import.meta.main) await runFromCommandLine(start);
