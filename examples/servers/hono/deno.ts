// The Hono application on Deno.serve.
// Run: npm run build && deno run --allow-net --allow-env --allow-read examples/servers/hono/deno.ts
// (add --allow-write with DATABASE_FILE; PORT, HOST and DATABASE_FILE as in ../main.ts). Deno
// finds hono and the built package through package.json and node_modules.
import { runFromCommandLine } from "../main.ts";
import { type RunningServer, type StartOptions, serverUrl } from "../serve.ts";
import { createApp } from "./app.ts";

// The part of Deno's API used here, so that the example typechecks without Deno's types.
declare const Deno: {
  serve(
    options: { port: number; hostname?: string; onListen?: () => void },
    handler: (request: Request, info: unknown) => Response | Promise<Response>,
  ): { readonly addr: { port: number }; shutdown(): Promise<void> };
};

/** Serves the Hono application on Deno. */
export async function start(options: StartOptions): Promise<RunningServer> {
  const { port, host } = options;
  const server = Deno.serve(
    // onListen replaces Deno's own startup line: runFromCommandLine prints the URL.
    { port, ...(host === undefined ? {} : { hostname: host }), onListen() {} },
    createApp(options).fetch,
  );
  // shutdown() lets the requests under way finish.
  return { url: serverUrl(host, server.addr.port, "/ldap/auth"), close: () => server.shutdown() };
}

if (import.meta.main) await runFromCommandLine(start);
