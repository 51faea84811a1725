// The Hono application on Bun.serve.
// Run: npm run build && bun examples/servers/hono/bun.ts (PORT, HOST and DATABASE_FILE as in
// ../main.ts).
import { runFromCommandLine } from "../main.ts";
import { type RunningServer, type StartOptions, serverUrl } from "../serve.ts";
import { createApp } from "./app.ts";

// The part of Bun's API used here, so that the example typechecks without bun-types.
declare const Bun: {
  serve(options: {
    port: number;
    hostname?: string;
    fetch(request: Request, server: unknown): Response | Promise<Response>;
  }): { readonly port: number; stop(closeActiveConnections?: boolean): Promise<void> };
};

/** Serves the Hono application on Bun. */
export async function start(options: StartOptions): Promise<RunningServer> {
  const { port, host } = options;
  const server = Bun.serve({
    port,
    ...(host === undefined ? {} : { hostname: host }),
    fetch: createApp(options).fetch,
  });
  // stop() without `true` lets the requests under way finish.
  return { url: serverUrl(host, server.port, "/ldap/auth"), close: () => server.stop() };
}

if (import.meta.main) await runFromCommandLine(start);
