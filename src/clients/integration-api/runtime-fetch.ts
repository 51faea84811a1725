// Which fetch a client calls: the injected one, the Node TLS one for the tls option, else the global.
import type { NormalizedOptions } from "./client-options.ts";
import { ConfigurationError } from "./errors.ts";
import { createNodeTlsFetch } from "./node-tls-fetch.ts";

type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

/**
 * The fetch a client calls: the injected one, else one that applies `tls` the way the runtime
 * allows, else undefined (the HTTP layer then calls the global fetch, looked up at each request,
 * which keeps test interceptors such as msw working).
 */
export function selectFetch({ fetch, tls }: NormalizedOptions): Fetch | undefined {
  if (fetch !== undefined && tls !== undefined) {
    throw new ConfigurationError(
      "Pass either the fetch option or the tls option, not both: an injected fetch makes its own TLS settings.",
    );
  }
  if (tls === undefined) return fetch;
  const runtime = globalThis as { Bun?: unknown; process?: { versions?: { node?: string } } };
  if (runtime.Bun !== undefined) {
    // Bun's fetch takes TLS settings per call.
    const bunTls = {
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      rejectUnauthorized: tls.rejectUnauthorized ?? true,
    };
    return (input, init) => globalThis.fetch(input, { ...init, tls: bunTls } as RequestInit);
  }
  // Node, and Deno through its node:https (its own fetch rejects a self-signed CA used as the
  // server's certificate, which is what the platform serves).
  if (runtime.process?.versions?.node !== undefined) return createNodeTlsFetch(tls);
  throw new ConfigurationError(
    "The tls option is not supported on this runtime: pass a fetch option that trusts the platform's certificate.",
  );
}
