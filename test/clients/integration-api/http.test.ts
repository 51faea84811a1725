import { HttpResponse, http } from "msw";
import { describe, expect, it, vi } from "vitest";
import pkg from "../../../package.json" with { type: "json" };
import {
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
  isNetworkError,
  isPlatformApiError,
} from "../../../src/clients/integration-api/errors.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";
import { useMswServer } from "./msw-server.ts";

const base = "https://integration.test";
const server = useMswServer();
const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };

/** Answers with `responses` in turn (the last one repeats) and records each request. */
function sequence(method: "get" | "put" | "post", url: string, ...responses: (() => Response)[]) {
  const requests: Request[] = [];
  server.use(
    http[method](url, ({ request }) => {
      requests.push(request.clone());
      const next = responses[Math.min(requests.length, responses.length) - 1];
      return next?.();
    }),
  );
  return requests;
}

describe("the Integration API HTTP layer", () => {
  it("sends Accept: application/json and a User-Agent naming the SDK and its version", async () => {
    const requests = sequence("get", `${base}/version/v1/current`, () => HttpResponse.json({}));
    await createIntegrationApi({ baseUrl: base }).request("GET", "/version/v1/current", {
      retry: true,
    });
    expect(requests[0]?.headers.get("accept")).toBe("application/json");
    expect(requests[0]?.headers.get("user-agent")).toBe(`platform-integration/${pkg.version}`);
  });

  it("joins paths whether or not the base URL ends with slashes", async () => {
    const requests = sequence("get", `${base}/version/v1/current`, () => HttpResponse.json({}));
    for (const baseUrl of [base, `${base}/`, new URL(`${base}//`)]) {
      await createIntegrationApi({ baseUrl }).request("GET", "/version/v1/current", {
        retry: true,
      });
    }
    expect(requests).toHaveLength(3);
  });

  it("refuses a base URL with a path before any request, naming the origin to use", async () => {
    const requests = sequence("get", `${base}/prefix/version/v1/current`, () =>
      HttpResponse.json({}),
    );
    const call = createIntegrationApi({ baseUrl: `${base}/version/v1` }).request(
      "GET",
      "/version/v1/current",
      { retry: true },
    );
    const error = await call.catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).toContain(`without a path`);
    expect(String(error)).toContain(`use ${base}`);
    expect(requests).toHaveLength(0);
  });

  it("reads PLATFORM_INTEGRATIONAPI at call time, not when the client is made", async () => {
    const api = createIntegrationApi();
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", `${base}/`);
    const requests = sequence("get", `${base}/version/v1/updates`, () => HttpResponse.json([]));
    const response = await api.request("GET", "/version/v1/updates", { retry: true });
    expect(response).toMatchObject({ status: 200, body: "[]", url: `${base}/version/v1/updates` });
    expect(requests).toHaveLength(1);
  });

  it("fails with an error naming the option and the variable when neither is set", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", undefined);
    const error = await createIntegrationApi()
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect((error as Error).message).toMatch(/baseUrl option.*PLATFORM_INTEGRATIONAPI/);
  });

  it("rejects a base URL with credentials without repeating them", async () => {
    const error = await createIntegrationApi({ baseUrl: "https://user:s3cret@integration.test" })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect(String(error)).not.toContain("s3cret");
  });

  // Catches: the query kept in the message (only a user and password were stripped).
  it("rejects a base URL with a query without repeating its token", async () => {
    const error = await createIntegrationApi({ baseUrl: "https://integration.test/?token=s3cret" })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isConfigurationError(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /must not have a query or fragment: https:\/\/integration\.test\/\?…/,
    );
    expect(String(error)).not.toContain("s3cret");
  });

  it("retries GET after network errors, 408, 429 and 5xx, then succeeds", async () => {
    const requests = sequence(
      "get",
      `${base}/version/v1/current`,
      () => HttpResponse.error(),
      () => new HttpResponse(null, { status: 408 }),
      () => new HttpResponse(null, { status: 429 }),
      () => new HttpResponse(null, { status: 502 }),
      () => new HttpResponse(null, { status: 599 }),
      () => HttpResponse.json({ ok: true }),
    );
    const api = createIntegrationApi({
      baseUrl: base,
      retry: { limit: 5, baseDelayMs: 1, maxDelayMs: 5 },
    });
    const response = await api.request("GET", "/version/v1/current", { retry: true });
    expect(response.body).toBe('{"ok":true}');
    expect(requests).toHaveLength(6);
  });

  it("gives up after the retry limit with an HttpError carrying status, method, URL, raw body and headers", async () => {
    const body = '{"error":"maintenance", "__proto__": {"x": 1}}';
    const requests = sequence(
      "get",
      `${base}/version/v1/current`,
      () =>
        new HttpResponse(body, {
          status: 503,
          headers: { "content-type": "application/json", "x-trace": "t1" },
        }),
    );
    const error = await createIntegrationApi({ baseUrl: base, ...fast })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(requests).toHaveLength(3);
    expect(isHttpError(error)).toBe(true);
    expect(error).toMatchObject({
      name: "HttpError",
      status: 503,
      method: "GET",
      url: `${base}/version/v1/current`,
      body,
      attempts: 3,
    });
    if (!isHttpError(error)) return;
    expect(error.headers.get("x-trace")).toBe("t1");
    expect(error.message).toBe(
      `GET ${base}/version/v1/current answered 503 after 3 attempts. The Integration API is overloaded or failing; the call can be retried later.`,
    );
  });

  it("does not retry a 4xx other than 408 and 429", async () => {
    const requests = sequence(
      "get",
      `${base}/version/v1/current`,
      () => new HttpResponse("nope", { status: 404 }),
    );
    const error = await createIntegrationApi({ baseUrl: base, ...fast })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(requests).toHaveLength(1);
    expect(error).toMatchObject({ status: 404, body: "nope", attempts: 1 });
    expect((error as Error).message).toContain("PLATFORM_INTEGRATIONAPI");
  });

  it("honours Retry-After, capped by maxRetryAfterMs", async () => {
    const requests = sequence(
      "get",
      `${base}/version/v1/current`,
      () => new HttpResponse(null, { status: 503, headers: { "retry-after": "3600" } }),
      () => new HttpResponse(null, { status: 429, headers: { "retry-after": "0" } }),
      () => HttpResponse.json({}),
    );
    const timers = vi.spyOn(globalThis, "setTimeout");
    const api = createIntegrationApi({
      baseUrl: base,
      retry: { baseDelayMs: 1000, maxRetryAfterMs: 7 },
    });
    await api.request("GET", "/version/v1/current", { retry: true });
    expect(requests).toHaveLength(3);
    const delays = timers.mock.calls.map(([, delay]) => delay);
    // The hour is capped to 7 ms; "0" is honoured as given rather than replaced by the 1 s backoff.
    expect(delays).toContain(7);
    expect(delays).toContain(0);
    expect(delays).not.toContain(1000);
  });

  it("never retries a request made with retry: false (PUT, POST)", async () => {
    for (const method of ["put", "post"] as const) {
      const requests = sequence(method, `${base}/x`, () => new HttpResponse(null, { status: 503 }));
      const error = await createIntegrationApi({ baseUrl: base, ...fast })
        .request(method === "put" ? "PUT" : "POST", "/x", { retry: false })
        .catch((caught: unknown) => caught);
      expect(requests).toHaveLength(1);
      expect(error).toMatchObject({ status: 503, attempts: 1 });
    }
  });

  it("sends a JSON body with its content type", async () => {
    const requests = sequence(
      "post",
      `${base}/audit/v1/event`,
      () => new HttpResponse(null, { status: 201 }),
    );
    await createIntegrationApi({ baseUrl: base }).request("POST", "/audit/v1/event", {
      retry: false,
      json: '{"action":"a"}',
    });
    expect(requests[0]?.headers.get("content-type")).toBe("application/json");
    expect(await requests[0]?.text()).toBe('{"action":"a"}');
  });

  it("reports a failure to connect as a NetworkError with its cause", async () => {
    sequence("get", `${base}/version/v1/current`, () => HttpResponse.error());
    const error = await createIntegrationApi({ baseUrl: base, retry: { limit: 1, baseDelayMs: 1 } })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isNetworkError(error)).toBe(true);
    expect(error).toMatchObject({ method: "GET", attempts: 2 });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("reachable");
  });

  it("wraps whatever an injected fetch throws as a NetworkError", async () => {
    const fetch = async () => {
      throw new Error("socket hang up");
    };
    const error = await createIntegrationApi({ baseUrl: base, fetch })
      .request("POST", "/audit/v1/event", { retry: false })
      .catch((caught: unknown) => caught);
    expect(isNetworkError(error)).toBe(true);
    expect((error as Error).message).toContain("socket hang up");
  });

  it("uses an injected fetch for every request", async () => {
    const seen: string[] = [];
    const fetch = async (request: Request) => {
      seen.push(`${request.method} ${request.url}`);
      return new Response("[]", { status: 200 });
    };
    await createIntegrationApi({ baseUrl: base, fetch }).request("GET", "/version/v1/updates", {
      retry: true,
    });
    expect(seen).toEqual([`GET ${base}/version/v1/updates`]);
  });

  it("rejects with the signal's reason when the caller aborts", async () => {
    server.use(http.get(`${base}/slow`, () => new Promise<never>(() => {})));
    const controller = new AbortController();
    const pending = createIntegrationApi({ baseUrl: base }).request("GET", "/slow", {
      retry: true,
      signal: controller.signal,
    });
    const reason = new Error("user navigated away");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("rejects contradictory or invalid options when the client is made", () => {
    expect(() =>
      createIntegrationApi({ fetch: globalThis.fetch, tls: { rejectUnauthorized: false } }),
    ).toThrow(/either the fetch option or the tls option/);
    expect(() => createIntegrationApi({ tls: { ca: "not a certificate" } })).toThrow(/PEM/);
    expect(() => createIntegrationApi({ timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => createIntegrationApi({ retry: { limit: 1.5 } })).toThrow(/retry.limit/);
  });

  it("throws only errors of its family for failed calls", async () => {
    sequence("get", `${base}/version/v1/current`, () => new HttpResponse(null, { status: 500 }));
    const error = await createIntegrationApi({ baseUrl: base, retry: { limit: 0 } })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isPlatformApiError(error)).toBe(true);
  });
});

describe("the Integration API HTTP layer, at the edges of success and of its budget", () => {
  it("treats a 300 answer as a failure, not as a success", async () => {
    sequence("get", `${base}/version/v1/current`, () => new HttpResponse("{}", { status: 300 }));
    const error = await createIntegrationApi({ baseUrl: base, retry: { limit: 0 } })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(isHttpError(error)).toBe(true);
    expect(error).toMatchObject({ status: 300, attempts: 1 });
  });

  it("gives up at once, without waiting, when the next wait would outlast totalTimeoutMs", async () => {
    // A Retry-After of an hour, honoured in full, against a call allowed one minute: the call
    // fails now with the answer it has rather than sleeping past its own deadline.
    const requests = sequence(
      "get",
      `${base}/version/v1/current`,
      () => new HttpResponse(null, { status: 503, headers: { "retry-after": "3600" } }),
      () => HttpResponse.json({}),
    );
    const error = await createIntegrationApi({
      baseUrl: base,
      totalTimeoutMs: 60_000,
      retry: { limit: 5, maxRetryAfterMs: 3_600_000 },
    })
      .request("GET", "/version/v1/current", { retry: true })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503, attempts: 1 });
    expect(requests).toHaveLength(1);
  });

  it("sends no Content-Type on a call without a body", async () => {
    const requests = sequence("get", `${base}/version/v1/current`, () => HttpResponse.json({}));
    await createIntegrationApi({ baseUrl: base }).request("GET", "/version/v1/current", {
      retry: true,
    });
    expect(requests[0]?.headers.get("content-type")).toBeNull();
  });

  it("rejects a call that is never retried with the caller's abort reason, cancelling the attempt", async () => {
    server.use(http.post(`${base}/audit/v1/event`, () => new Promise<never>(() => {})));
    const controller = new AbortController();
    // An attempt timeout longer than the test's: only cancelling the request can settle it.
    const pending = createIntegrationApi({ baseUrl: base, timeoutMs: 600_000 }).request(
      "POST",
      "/audit/v1/event",
      { retry: false, json: "{}", signal: controller.signal },
    );
    const reason = new Error("shutting down");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it("reports an injected fetch's own time-out (a TimeoutError DOMException) as a CallTimeoutError", async () => {
    const fetch = async () => {
      throw new DOMException("The operation timed out.", "TimeoutError");
    };
    const error = await createIntegrationApi({ baseUrl: base, fetch })
      .request("POST", "/audit/v1/event", { retry: false })
      .catch((caught: unknown) => caught);
    expect(isCallTimeoutError(error)).toBe(true);
    expect(error).toMatchObject({ method: "POST", attempts: 1, retryable: true });
  });
});
