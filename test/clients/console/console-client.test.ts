import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  createConsoleClient,
  fetchPlatformCa,
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
  isResponseShapeError,
} from "../../../src/clients/console/index.ts";
import { createIntegrationApiHandlers } from "../../../src/msw/index.ts";
import { useMswServer } from "../integration-api/msw-server.ts";

const baseUrl = "https://platform.test";
const server = useMswServer();

function platform(consoleOptions: Record<string, string> = {}) {
  const { handlers, api } = createIntegrationApiHandlers({ baseUrl, consoleOptions });
  const requests: Request[] = [];
  server.events.on("request:start", ({ request }) => {
    requests.push(request.clone());
  });
  server.use(...handlers);
  return { api, requests };
}

const client = () => createConsoleClient({ baseUrl, retry: { limit: 2, baseDelayMs: 0 } });

describe("setStartupStatus()", () => {
  it("puts the message, without a severity for progress text, as JSON", async () => {
    const { api, requests } = platform();
    await client().setStartupStatus("Importing users: 1,200 of 5,000");
    await client().setStartupStatus("The directory is unreachable", "error");
    expect(api.console.startupStatuses).toEqual([
      { message: "Importing users: 1,200 of 5,000" },
      { message: "The directory is unreachable", severity: "error" },
    ]);
    expect(requests[0]?.method).toBe("PUT");
    expect(requests[0]?.headers.get("content-type")).toBe("application/json");
    expect(await requests[0]?.text()).toBe('{"message":"Importing users: 1,200 of 5,000"}');
  });

  it("refuses an undocumented severity or a non-string message before any request", async () => {
    const { requests } = platform();
    await expect(client().setStartupStatus("x", "warning" as never)).rejects.toThrow(
      'The only documented severity is "error"',
    );
    await expect(client().setStartupStatus(undefined as never)).rejects.toThrow(TypeError);
    expect(requests).toEqual([]);
  });

  it("is not retried: a 503 rejects with an HttpError after one attempt", async () => {
    const { api, requests } = platform();
    api.failNext(1, { status: 503 });
    const error = await client()
      .setStartupStatus("starting")
      .catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.status).toBe(503);
    expect(requests).toHaveLength(1);
    expect(api.console.startupStatuses).toEqual([]);
  });
  it("times out without the advice of a timed-out update", async () => {
    server.use(http.put(`${baseUrl}/status/v1/startup`, () => new Promise<never>(() => {})));
    const error = await createConsoleClient({ baseUrl, timeoutMs: 20 })
      .setStartupStatus("starting")
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
    expect((error as Error).message).not.toContain("current version");
  });
});

describe("option()", () => {
  it("returns the raw text value, the name sent as a query parameter", async () => {
    const { requests } = platform({ "snapshot.schedule": "@every 5h" });
    expect(await client().option("snapshot.schedule")).toBe("@every 5h");
    expect(new URL(requests[0]?.url ?? "").search).toBe("?name=snapshot.schedule");
  });

  it("rejects an unknown name with the platform's 400", async () => {
    platform();
    const error = await client()
      .option("nope")
      .catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.status).toBe(400);
    await expect(client().option("")).rejects.toThrow(TypeError);
  });
});

describe("fetchPlatformCa() (requests intercepted by msw)", () => {
  it("refuses trustOnFirstUse together with tls or fetch", async () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    for (const options of [{ tls: { ca } }, { fetch: globalThis.fetch }]) {
      const error = await fetchPlatformCa({ baseUrl, trustOnFirstUse: true, ...options }).catch(
        (caught: unknown) => caught,
      );
      expect(isConfigurationError(error)).toBe(true);
    }
  });

  it("fetches over plain http too (mock-api without --https), where nothing is skipped", async () => {
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    const { handlers } = createIntegrationApiHandlers({
      baseUrl: "http://platform.test",
      consoleOptions: { "tls.authority.cert": pem },
    });
    server.use(...handlers);
    expect(await fetchPlatformCa({ baseUrl: "http://platform.test", trustOnFirstUse: true })).toBe(
      `${pem}\n`,
    );
  });

  it("fails with a ResponseShapeError when the option holds no PEM certificate", async () => {
    server.use(http.get(`${baseUrl}/console/v1/option`, () => HttpResponse.text("not a cert")));
    const error = await fetchPlatformCa({ baseUrl }).catch((caught: unknown) => caught);
    expect(isResponseShapeError(error) && error.body).toBe("not a cert");
  });
});
