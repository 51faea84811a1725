import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSelfSignedCertificate,
  type SelfSignedCertificate,
} from "../../src/cli/self-signed-certificate.ts";
import type { IntegrationApiOptions } from "../../src/clients/integration-api/client-options.ts";
import {
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
} from "../../src/clients/integration-api/errors.ts";
import { type Handler, type LocalServer, startServer } from "./integration-api/local-server.ts";

/** One call of a client, and the answer that makes it succeed. */
export interface ClientCall {
  name: string;
  /** Creates the client with `options` and makes the call. */
  run(options: IntegrationApiOptions): Promise<unknown>;
  /** The successful answer a server gives to this call. */
  answer: { status: number; contentType: string; body: string };
}

/**
 * The behaviours every Integration API client shares, run against real servers on loopback for
 * each call of a client: TLS with a CA, per-attempt time-outs, typed HTTP errors and redirects
 * that are never followed (a followed redirect would carry a login's password to another host).
 */
export function describeClientBehaviours(client: string, calls: ClientCall[]): void {
  describe(`${client}: shared client behaviours against real servers`, () => {
    let certificate: SelfSignedCertificate;
    const servers: LocalServer[] = [];
    beforeAll(async () => {
      certificate = await createSelfSignedCertificate();
    });
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((server) => server.close()));
    });

    async function serve(handler: Handler, tls?: SelfSignedCertificate) {
      const server = await startServer(handler, tls);
      servers.push(server);
      return server;
    }

    const succeed =
      (call: ClientCall, received: string[] = []): Handler =>
      (request, response) => {
        received.push(`${request.method} ${request.url}`);
        response.writeHead(call.answer.status, { "content-type": call.answer.contentType });
        response.end(call.answer.body);
      };

    for (const call of calls) {
      describe(call.name, () => {
        it("trusts a self-signed certificate given as tls.ca, and refuses it without", async () => {
          const server = await serve(succeed(call), certificate);
          await call.run({ baseUrl: server.url, tls: { ca: certificate.cert } });
          const error = await call
            .run({ baseUrl: server.url, retry: { limit: 0 } })
            .catch((caught: unknown) => caught);
          expect(isConfigurationError(error)).toBe(true);
        });

        it("times out an attempt that gets no answer", async () => {
          const server = await serve(() => {});
          const error = await call
            .run({ baseUrl: server.url, timeoutMs: 50, retry: { limit: 0 } })
            .catch((caught: unknown) => caught);
          expect(isCallTimeoutError(error)).toBe(true);
        });

        it("rejects with an HttpError carrying the status and body of a failure", async () => {
          const server = await serve((_request, response) => {
            response.writeHead(500, { "content-type": "text/plain" });
            response.end("database down");
          });
          const error = await call
            .run({ baseUrl: server.url, retry: { limit: 0 } })
            .catch((caught: unknown) => caught);
          expect(isHttpError(error)).toBe(true);
          expect(error).toMatchObject({ status: 500, body: "database down" });
        });

        it("never follows a redirect, so nothing reaches the other server", async () => {
          const elsewhere: string[] = [];
          const other = await serve(succeed(call, elsewhere));
          const server = await serve((request, response) => {
            response.writeHead(307, { location: `${other.url}${request.url}` });
            response.end();
          });
          const error = await call
            .run({ baseUrl: server.url, retry: { limit: 0 } })
            .catch((caught: unknown) => caught);
          expect(isHttpError(error) && error.status).toBe(307);
          expect(elsewhere).toEqual([]);
        });
      });
    }
  });
}
