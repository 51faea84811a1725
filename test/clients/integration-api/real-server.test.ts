import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSelfSignedCertificate,
  type SelfSignedCertificate,
} from "../../../src/cli/self-signed-certificate.ts";
import {
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
  isNetworkError,
} from "../../../src/clients/integration-api/errors.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";
import { type Handler, type LocalServer, startServer } from "./local-server.ts";

let certificate: SelfSignedCertificate;
let other: SelfSignedCertificate;
const servers: LocalServer[] = [];

beforeAll(async () => {
  [certificate, other] = await Promise.all([
    createSelfSignedCertificate(),
    createSelfSignedCertificate(),
  ]);
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler, tls?: SelfSignedCertificate): Promise<LocalServer> {
  const server = await startServer(handler, tls);
  servers.push(server);
  return server;
}

const ok: Handler = (_request, response) => {
  response.setHeader("content-type", "application/json");
  response.end('{"ok":true}');
};

describe("TLS against a real HTTPS server with a self-signed certificate", () => {
  it("refuses the certificate by default with a configuration error naming the fix, without retrying", async () => {
    let requests = 0;
    const server = await serve((request, response, body) => {
      requests++;
      ok(request, response, body);
    }, certificate);
    const error = await createIntegrationApi({ baseUrl: server.url, retry: { limit: 2 } })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect(isNetworkError(error)).toBe(false);
    expect((error as Error).message).toMatch(
      /certificate is not trusted \(\w+\)\. Pass tls: \{ ca \}/,
    );
    expect((error as Error).message).toContain("tls.authority.cert");
    expect((error as Error).message).toContain("--cert-out");
    expect(server.connections()).toBe(1);
    expect(requests).toBe(0);
  });

  it("treats tls: { ca: undefined } (an unset variable) as no tls option", async () => {
    const plain = await serve(ok);
    const api = createIntegrationApi({ baseUrl: plain.url, tls: { ca: undefined } });
    expect((await api.request("GET", "/x", { retry: true })).status).toBe(200);
    const secure = await serve(ok, certificate);
    const error = await createIntegrationApi({ baseUrl: secure.url, tls: { ca: undefined } })
      .request("GET", "/x", { retry: true })
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toContain("check that the variable is set");
  });

  it("rejects tls with an http: base URL as a configuration error naming both, before any request", async () => {
    let requests = 0;
    const server = await serve((request, response, body) => {
      requests++;
      ok(request, response, body);
    });
    for (const tls of [{ ca: certificate.cert }, { rejectUnauthorized: false }]) {
      const error = await createIntegrationApi({ baseUrl: server.url, tls })
        .request("GET", "/version/v1/current", { retry: true })
        .catch((caught: unknown) => caught);
      expect(isConfigurationError(error)).toBe(true);
      expect((error as Error).message).toContain(`tls option applies to https: URLs`);
      expect((error as Error).message).toContain(server.url);
    }
    expect(requests).toBe(0);
  });

  it("trusts the certificate given as tls.ca", async () => {
    const server = await serve(ok, certificate);
    const api = createIntegrationApi({ baseUrl: server.url, tls: { ca: certificate.cert } });
    const response = await api.request("GET", "/version/v1/current", { retry: true });
    expect(response).toMatchObject({ status: 200, body: '{"ok":true}' });
    expect(response.headers.get("content-type")).toBe("application/json");
  });

  it("still refuses a certificate that tls.ca does not cover", async () => {
    const server = await serve(ok, certificate);
    const error = await createIntegrationApi({
      baseUrl: server.url,
      tls: { ca: [other.cert] },
      retry: { limit: 0 },
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect((error as Error).message).toContain("The certificate in tls.ca does not verify it");
  });

  it("reads a 204 answer (no body) through tls.ca, and goes on using the connection", async () => {
    const server = await serve((_request, response) => {
      response.statusCode = 204;
      response.end();
    }, certificate);
    const api = createIntegrationApi({ baseUrl: server.url, tls: { ca: certificate.cert } });
    for (let index = 0; index < 2; index++) {
      const response = await api.request("POST", "/audit/v1/event", { retry: false, json: "{}" });
      expect(response).toMatchObject({ status: 204, body: "" });
    }
    expect(server.connections()).toBe(1);
  });

  it("skips verification only with rejectUnauthorized: false", async () => {
    const server = await serve(ok, certificate);
    const api = createIntegrationApi({ baseUrl: server.url, tls: { rejectUnauthorized: false } });
    expect((await api.request("GET", "/x", { retry: true })).status).toBe(200);
  });

  it("sends bodies and headers, and reuses one keep-alive connection", async () => {
    const received: string[] = [];
    const server = await serve((request, response, body) => {
      received.push(`${request.method} ${request.url} ${request.headers["content-type"]} ${body}`);
      response.statusCode = 201;
      response.end();
    }, certificate);
    const api = createIntegrationApi({ baseUrl: server.url, tls: { ca: certificate.cert } });
    for (let index = 0; index < 5; index++) {
      const response = await api.request("POST", "/audit/v1/event", {
        retry: false,
        json: `{"n":${index}}`,
      });
      expect(response).toMatchObject({ status: 201, body: "" });
    }
    expect(received[4]).toBe('POST /audit/v1/event application/json {"n":4}');
    expect(server.connections()).toBe(1);
  });
});

describe("timeouts against a real server", () => {
  const silent: Handler = () => {};

  it("times out each attempt, retries a GET, and reports the attempts", async () => {
    let requests = 0;
    const server = await serve(() => {
      requests++;
    });
    const error = await createIntegrationApi({
      baseUrl: server.url,
      // Long enough for each request to reach the server on a loaded machine before it is cut.
      timeoutMs: 400,
      retry: { limit: 2, baseDelayMs: 1 },
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
    expect(error).toMatchObject({ attempts: 3 });
    expect(requests).toBe(3);
    expect((error as Error).message).toContain("400 ms per attempt");
    // A GET changes nothing: the advice is to raise the time-outs, not to check a version.
    expect((error as Error).message).toContain("raise timeoutMs");
    expect((error as Error).message).not.toContain("may still be applying");
  });

  it("bounds the whole call by totalTimeoutMs", async () => {
    const server = await serve(silent);
    const error = await createIntegrationApi({
      baseUrl: server.url,
      timeoutMs: 60_000,
      totalTimeoutMs: 100,
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
  });

  it("times out a body that stalls after the headers", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write("[");
    });
    const error = await createIntegrationApi({
      baseUrl: server.url,
      timeoutMs: 100,
      retry: { limit: 0 },
    })
      .request("GET", "/version/v1/updates", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
  });

  it("says that a timed-out PUT may still be running", async () => {
    const server = await serve(silent);
    const error = await createIntegrationApi({ baseUrl: server.url })
      .request("PUT", "/version/v1/52", { retry: false, timeoutMs: 50 })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
    expect((error as Error).message).toContain("may still be applying it");
  });

  it("reports a refused connection as a NetworkError naming the code", async () => {
    const server = await serve(ok);
    await server.close();
    const error = await createIntegrationApi({ baseUrl: server.url, retry: { limit: 0 } })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isNetworkError(error)).toBe(true);
    expect((error as Error).message).toContain("ECONNREFUSED");
  });
});

describe("redirects against a real server", () => {
  it("never follows one: a 3xx is an HttpError naming the target, retried like a failure", async () => {
    const seen: string[] = [];
    const target = await serve((request, response, body) => {
      seen.push(`${request.method} target`);
      ok(request, response, body);
    });
    const server = await serve((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(302, { location: `${target.url}/elsewhere` }).end();
    });
    const error = await createIntegrationApi({
      baseUrl: server.url,
      retry: { limit: 1, baseDelayMs: 1 },
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isHttpError(error)).toBe(true);
    expect(error).toMatchObject({ status: 302, attempts: 2 });
    expect((error as Error).message).toContain(`redirects to ${target.url}/elsewhere`);
    expect(seen).toEqual(["GET /version/v1/current", "GET /version/v1/current"]);
  });
});
