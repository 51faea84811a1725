import { ConfigurationError } from "./errors.ts";
import { createNodeTlsFetch } from "./node-tls-fetch.ts";
import type { NormalizedOptions, TlsOptions } from "./options.ts";

type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

interface DenoGlobal {
  createHttpClient(options: { caCerts?: string[] }): unknown;
}

/**
 * The fetch a client calls: the injected one, else one that applies `tls` the way the runtime
 * allows, else undefined (ky then calls the global fetch at each request, which keeps test
 * interceptors such as msw working).
 */
export function selectFetch({ fetch, tls }: NormalizedOptions): Fetch | undefined {
  if (fetch !== undefined && tls !== undefined) {
    throw new ConfigurationError(
      "Pass either the fetch option or the tls option, not both: an injected fetch makes its own TLS settings.",
    );
  }
  if (tls === undefined) return fetch;
  const runtime = globalThis as {
    Bun?: unknown;
    Deno?: DenoGlobal;
    process?: { versions?: { node?: string } };
  };
  if (runtime.Bun !== undefined) {
    // Bun's fetch takes TLS settings per call.
    const bunTls = {
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      rejectUnauthorized: tls.rejectUnauthorized ?? true,
    };
    return (input, init) => globalThis.fetch(input, { ...init, tls: bunTls } as RequestInit);
  }
  if (runtime.Deno !== undefined) return denoFetch(runtime.Deno, tls);
  if (runtime.process?.versions?.node !== undefined) return createNodeTlsFetch(tls);
  throw new ConfigurationError(
    "The tls option is not supported on this runtime: pass a fetch option that trusts the platform's certificate.",
  );
}

function denoFetch(deno: DenoGlobal, tls: TlsOptions): Fetch {
  if (tls.rejectUnauthorized === false) {
    throw new ConfigurationError(
      "Deno cannot skip certificate verification for one client: pass tls.ca with the platform's certificate, or run Deno with --unsafely-ignore-certificate-errors=<host>.",
    );
  }
  const client = deno.createHttpClient({
    caCerts: tls.ca === undefined ? [] : Array.isArray(tls.ca) ? tls.ca : [tls.ca],
  });
  return (input, init) => globalThis.fetch(input, { ...init, client } as RequestInit);
}
