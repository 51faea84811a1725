import { HttpResponse, http } from "msw";
import { describe, expect, it, vi } from "vitest";
import {
  type AuditEvent,
  createAuditClient,
  defineAuditActions,
  isConfigurationError,
  isHttpError,
} from "../../../src/clients/audit/index.ts";
import { createFakeIntegrationApi } from "../../../src/testing/fake-integration-api.ts";
import { useMswServer } from "../integration-api/msw-server.ts";
import { collectDrops, hangingFetch } from "./test-doubles.ts";

const baseUrl = "https://integration.test";
const eventUrl = `${baseUrl}/audit/v1/event`;
const server = useMswServer();
const fast = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };
const login: AuditEvent = {
  name: "user.login",
  description: "john@example.com logged in successfully",
  title: "User Login Success",
  action: "user.login.success",
  ipAddress: "192.30.252.12",
};

/** Answers each POST with the next response (the last repeats); returns the bodies received. */
function serveEvents(...responses: (() => Response)[]) {
  const bodies: string[] = [];
  let calls = 0;
  server.use(
    http.post(eventUrl, async ({ request }) => {
      const respond = responses[Math.min(calls++, responses.length - 1)] ?? created;
      const response = respond();
      if (response.status >= 200 && response.status < 300) bodies.push(await request.text());
      return response;
    }),
  );
  return { bodies, calls: () => calls };
}

const created = () =>
  new HttpResponse(null, { status: 201, headers: { "content-type": "text/plain; charset=utf-8" } });

/** The delays of the backoff timers: those under a second, unlike any request or flush timeout. */
function watchDelays(): () => number[] {
  const timers = vi.spyOn(globalThis, "setTimeout");
  return () => timers.mock.calls.map(([, delay]) => delay ?? 0).filter((delay) => delay < 1_000);
}

/** Options the client cannot send with (tls on an http: URL): a configuration error. */
const misconfigured = {
  baseUrl: "http://127.0.0.1:1",
  tls: { rejectUnauthorized: false },
} as const;

describe("send()", () => {
  it("POSTs the event with its wire names and resolves on 201", async () => {
    const { bodies } = serveEvents(created);
    await createAuditClient({ baseUrl }).send(login);
    expect(bodies.map((body) => JSON.parse(body))).toEqual([
      {
        name: "user.login",
        description: "john@example.com logged in successfully",
        title: "User Login Success",
        action: "user.login.success",
        ip_address: "192.30.252.12",
      },
    ]);
  });

  it("leaves out fields that are undefined", async () => {
    const { bodies } = serveEvents(() => new HttpResponse(null, { status: 200 }));
    await createAuditClient({ baseUrl }).send({ action: "report.export", ipAddress: undefined });
    expect(bodies).toEqual(['{"action":"report.export"}']);
  });

  it("rejects with a typed error otherwise, without retrying", async () => {
    const { calls } = serveEvents(() => new HttpResponse("bad ip_address", { status: 400 }));
    const error = await createAuditClient({ baseUrl, ...fast })
      .send(login)
      .catch((caught: unknown) => caught);
    expect(isHttpError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 400,
      body: "bad ip_address",
      method: "POST",
      url: eventUrl,
    });
    expect(calls()).toBe(1);
  });

  it("makes one attempt, even at a status that record() retries", async () => {
    const { calls } = serveEvents(() => new HttpResponse(null, { status: 503 }), created);
    const sent = createAuditClient({ baseUrl, ...fast }).send(login);
    await expect(sent).rejects.toMatchObject({ status: 503 });
    expect(calls()).toBe(1);
  });

  it("honours the caller's signal: an aborted call rejects with its reason and sends nothing", async () => {
    const { calls } = serveEvents(created);
    const reason = new Error("the caller gave up");
    const sent = createAuditClient({ baseUrl }).send(login, { signal: AbortSignal.abort(reason) });
    await expect(sent).rejects.toBe(reason);
    expect(calls()).toBe(0);
  });
});

describe("record()", () => {
  it("returns at once and delivers in the background", async () => {
    const { bodies } = serveEvents(created);
    const audit = createAuditClient({ baseUrl });
    expect(audit.record(login)).toBeUndefined();
    expect(bodies).toEqual([]);
    expect(await audit.flush()).toBe(true);
    expect(bodies).toHaveLength(1);
    expect(audit.stats()).toEqual({
      queued: 0,
      inFlight: 0,
      bytes: 0,
      delivered: 1,
      dropped: 0,
      droppedByReason: {
        overflow: 0,
        rejected: 0,
        redirected: 0,
        configuration: 0,
        closed: 0,
        exit: 0,
        spool_full: 0,
        spool_failed: 0,
        spool_damaged: 0,
      },
      retried: 0,
    });
  });

  it("checks events locally with clear errors", () => {
    const audit = createAuditClient({ baseUrl });
    expect(() => audit.record({} as AuditEvent)).toThrow(/needs an action, a non-empty string/);
    expect(() => audit.record({ action: "" })).toThrow(TypeError);
    expect(() => audit.record({ action: "a", description: 42 } as unknown as AuditEvent)).toThrow(
      "The audit event's description must be a string, got number.",
    );
    expect(() => audit.record(null as unknown as AuditEvent)).toThrow(/is an object/);
    expect(audit.stats().queued).toBe(0);
  });

  it("refuses a bad option at creation, naming it; flushTimeoutMs may be Infinity", () => {
    for (const name of [
      "concurrency",
      "maxEventBytes",
      "maxQueueEvents",
      "maxQueueBytes",
      "flushTimeoutMs",
    ]) {
      expect(() => createAuditClient({ baseUrl, [name]: -1 }), name).toThrow(
        new RegExp(`^${name} must be`),
      );
    }
    expect(() =>
      createAuditClient({ baseUrl, flushTimeoutMs: Number.POSITIVE_INFINITY }),
    ).not.toThrow();
  });

  it("caps the size of one event, counting UTF-8 bytes", async () => {
    const { bodies } = serveEvents(created);
    const audit = createAuditClient({ baseUrl, maxEventBytes: 100 });
    const overhead = JSON.stringify({ description: "", action: "a" }).length;
    audit.record({ action: "a", description: "x".repeat(100 - overhead) });
    // As many characters, but "é" takes two bytes in UTF-8.
    expect(() => audit.record({ action: "a", description: "é".repeat(100 - overhead) })).toThrow(
      /is 1\d\d bytes of JSON, over maxEventBytes \(100\)/,
    );
    await audit.close();
    expect(bodies).toHaveLength(1);
  });

  it("accepts only the catalogue's actions when given one", async () => {
    const { bodies } = serveEvents(created);
    const actions = defineAuditActions({ userLogin: "user.login.success" });
    const audit = createAuditClient({ baseUrl, actions });
    audit.record({ action: actions.userLogin });
    // @ts-expect-error: the catalogue narrows the action type too.
    expect(() => audit.record({ action: "user.logout" })).toThrow(/not in the client's catalogue/);
    await audit.close();
    expect(bodies).toEqual(['{"action":"user.login.success"}']);
  });

  it("retries network errors, 408, 429 and 5xx until delivered, reporting each failure", async () => {
    const { bodies, calls } = serveEvents(
      () => HttpResponse.error(),
      () => new HttpResponse(null, { status: 408 }),
      () => new HttpResponse(null, { status: 429, headers: { "retry-after": "0" } }),
      () => new HttpResponse(null, { status: 503 }),
      created,
    );
    const errors: unknown[] = [];
    const audit = createAuditClient({ baseUrl, ...fast, onError: (error) => errors.push(error) });
    audit.record(login);
    expect(await audit.flush()).toBe(true);
    expect(calls()).toBe(5);
    expect(bodies).toHaveLength(1);
    expect(errors.map((error) => (error as Error).name)).toEqual([
      "NetworkError",
      "HttpError",
      "HttpError",
      "HttpError",
    ]);
    // The last failure stays on record, though the event was delivered in the end.
    expect(audit.stats().lastError?.message).toMatch(/503/);
  });

  it.each([429, 503])(
    "honours the Retry-After of a %i, capped by maxRetryAfterMs",
    async (status) => {
      // Without jitter, the computed backoff would be a full minute.
      vi.spyOn(Math, "random").mockReturnValue(1);
      const { bodies } = serveEvents(
        () => new HttpResponse(null, { status, headers: { "retry-after": "3600" } }),
        () => new HttpResponse(null, { status, headers: { "retry-after": "0" } }),
        created,
      );
      const delays = watchDelays();
      const audit = createAuditClient({
        baseUrl,
        retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, maxRetryAfterMs: 5 },
      });
      audit.record(login);
      expect(await audit.flush({ timeoutMs: 5_000 })).toBe(true);
      expect(bodies).toHaveLength(1);
      expect(delays()).toEqual([5, 0]);
    },
  );

  it("backs off per slot, doubling on each failure and starting again after a success", async () => {
    vi.spyOn(Math, "random").mockReturnValue(1);
    // Each event fails twice, then is accepted.
    const failures = new Map<string, number>();
    server.use(
      http.post(eventUrl, async ({ request }) => {
        const body = await request.text();
        const failed = failures.get(body) ?? 0;
        failures.set(body, failed + 1);
        return failed < 2 ? new HttpResponse(null, { status: 500 }) : created();
      }),
    );
    const delays = watchDelays();
    const audit = createAuditClient({
      baseUrl,
      concurrency: 2,
      retry: { baseDelayMs: 1, maxDelayMs: 500 },
    });
    for (const action of ["a", "b", "c", "d"]) audit.record({ action });
    expect(await audit.flush({ timeoutMs: Number.POSITIVE_INFINITY })).toBe(true);
    // Two slots, two events each: every event starts again from the base delay, and one slot's
    // failures never shorten or lengthen the other's.
    expect(delays().sort((left, right) => left - right)).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    expect(audit.stats()).toMatchObject({ delivered: 4, dropped: 0 });
  });

  it("drops an event the API rejects with a 4xx, and reports it", async () => {
    serveEvents(() => new HttpResponse("invalid", { status: 422 }));
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, onDrop });
    audit.record(login);
    expect(await audit.flush()).toBe(true);
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ reason: "rejected", count: 1, events: [login] });
    expect(drops[0]?.error).toMatchObject({ status: 422, body: "invalid" });
    expect(audit.stats()).toMatchObject({ dropped: 1, bytes: 0 });
  });

  it("stops at a configuration error: reported once, flush() false at once, events kept until close", async () => {
    // tls with an http: URL: a configuration error retrying cannot fix.
    const { drops, onDrop } = collectDrops();
    const errors: unknown[] = [];
    const audit = createAuditClient({
      ...misconfigured,
      onDrop,
      onError: (error) => errors.push(error),
      concurrency: 2,
    });
    for (let index = 0; index < 5; index++) audit.record({ action: `a${index}` });
    // Neither the timeout nor Infinity matters: flush() resolves as soon as delivery stops.
    expect(await audit.flush({ timeoutMs: Number.POSITIVE_INFINITY })).toBe(false);
    expect(await audit.flush({ timeoutMs: Number.POSITIVE_INFINITY })).toBe(false);
    expect(errors).toHaveLength(1);
    expect(isConfigurationError(errors[0])).toBe(true);
    audit.record({ action: "later" });
    await Promise.resolve();
    expect(audit.stats()).toMatchObject({
      queued: 6,
      inFlight: 0,
      delivered: 0,
      dropped: 0,
      configurationError: expect.stringMatching(/The tls option applies to https/),
      lastError: { message: expect.stringMatching(/The tls option applies to https/) },
    });
    expect(drops).toEqual([]);
    expect(await audit.close()).toBe(false);
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ reason: "configuration", count: 6 });
    expect(drops[0]?.events.map(({ action }) => action).sort()).toEqual([
      "a0",
      "a1",
      "a2",
      "a3",
      "a4",
      "later",
    ]);
    expect(isConfigurationError(drops[0]?.error)).toBe(true);
    expect(audit.stats()).toMatchObject({ queued: 0, inFlight: 0, bytes: 0, dropped: 6 });
  });

  it("logs a configuration error once by default, whatever the number of events", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const audit = createAuditClient({ ...misconfigured, onDrop: () => {} });
    for (let index = 0; index < 20; index++) audit.record({ action: "a" });
    await audit.flush();
    expect(error).toHaveBeenCalledTimes(1);
    expect(String(error.mock.calls[0]?.[0])).toMatch(
      /audit delivery stopped.*The tls option applies to https/,
    );
    await audit.close({ timeoutMs: 0 });
  });

  it("is silent by default about failures that it retries", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    serveEvents(() => new HttpResponse(null, { status: 503 }), created);
    const audit = createAuditClient({ baseUrl, ...fast });
    audit.record(login);
    expect(await audit.flush()).toBe(true);
    expect(error).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it("bounds the queue by count, reporting the overflow once with its count", async () => {
    serveEvents(created);
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, maxQueueEvents: 3, onDrop });
    for (let index = 0; index < 5; index++) audit.record({ action: `a${index}` });
    expect(audit.stats().queued).toBe(3);
    await audit.flush();
    // No error key at all: an overflow has no error behind it, and leaves lastError unset.
    expect(drops).toStrictEqual([
      { reason: "overflow", count: 2, events: [{ action: "a3" }, { action: "a4" }] },
    ]);
    expect(audit.stats()).toMatchObject({ delivered: 3, dropped: 2 });
    expect(audit.stats().lastError).toBeUndefined();
    // A later overflow is a report of its own.
    for (let index = 5; index < 9; index++) audit.record({ action: `a${index}` });
    await audit.flush();
    expect(drops.map(({ count }) => count)).toEqual([2, 1]);
  });

  it("bounds the queue by bytes", async () => {
    serveEvents(created);
    const { drops, onDrop } = collectDrops();
    const size = '{"action":"a0"}'.length;
    const audit = createAuditClient({ baseUrl, maxQueueBytes: size * 2, onDrop });
    for (let index = 0; index < 3; index++) audit.record({ action: `a${index}` });
    expect(audit.stats()).toMatchObject({ queued: 2, bytes: size * 2 });
    await audit.flush();
    expect(drops).toMatchObject([{ reason: "overflow", count: 1 }]);
  });

  it("warns on the console about drops when no onDrop is given", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const audit = createAuditClient({ baseUrl, maxQueueEvents: 1 });
    serveEvents(created);
    audit.record({ action: "a" });
    audit.record({ action: "b" });
    await audit.flush();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("dropped 1 audit event (overflow)"));
    warn.mockRestore();
  });
});

describe("flush() and close()", () => {
  it("waits for events recorded during the flush", async () => {
    let recordedLate = false;
    const { bodies } = serveEvents(() => {
      if (!recordedLate) {
        recordedLate = true;
        audit.record({ action: "late" });
      }
      return created();
    });
    const audit = createAuditClient({ baseUrl });
    audit.record({ action: "early" });
    expect(await audit.flush()).toBe(true);
    expect(bodies.map((body) => JSON.parse(body).action).sort()).toEqual(["early", "late"]);
  });

  it("resolves false when the time is up or the signal aborts, and never rejects", async () => {
    serveEvents(() => new HttpResponse(null, { status: 503 }));
    const audit = createAuditClient({ baseUrl, ...fast, onDrop: () => {} });
    audit.record(login);
    expect(await audit.flush({ timeoutMs: 20 })).toBe(false);
    expect(await audit.flush({ signal: AbortSignal.abort() })).toBe(false);
    expect(audit.stats().queued + audit.stats().inFlight).toBe(1);
    await audit.close({ timeoutMs: 0 });
  });

  it("resolves true at once when there is nothing to send", async () => {
    expect(await createAuditClient({ baseUrl }).flush({ timeoutMs: 0 })).toBe(true);
  });

  it("close() delivers what was recorded, then drops later events as closed", async () => {
    const { bodies } = serveEvents(created);
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, onDrop });
    audit.record({ action: "before" });
    expect(await audit.close()).toBe(true);
    audit.record({ action: "after" });
    await Promise.resolve();
    expect(bodies).toHaveLength(1);
    expect(drops).toEqual([{ reason: "closed", count: 1, events: [{ action: "after" }] }]);
  });

  it("close() drops what it could not deliver in time, in flight included", async () => {
    serveEvents(() => new HttpResponse(null, { status: 503 }));
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, ...fast, concurrency: 1, onDrop });
    audit.record({ action: "a" });
    audit.record({ action: "b" });
    expect(await audit.close({ timeoutMs: 30 })).toBe(false);
    expect(drops.every(({ reason }) => reason === "closed")).toBe(true);
    expect(drops.flatMap(({ events }) => events.map(({ action }) => action)).sort()).toEqual([
      "a",
      "b",
    ]);
    expect(audit.stats()).toMatchObject({ queued: 0, inFlight: 0, bytes: 0, dropped: 2 });
  });

  it("close() aborts a delivery in flight instead of waiting for its answer", async () => {
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: hangingFetch, timeoutMs: 600_000, onDrop });
    audit.record({ action: "a" });
    await Promise.resolve();
    expect(audit.stats().inFlight).toBe(1);
    expect(await audit.close({ timeoutMs: 0 })).toBe(false);
    expect(drops).toMatchObject([{ reason: "closed", count: 1, events: [{ action: "a" }] }]);
    expect(audit.stats()).toMatchObject({ inFlight: 0, dropped: 1 });
  });

  it("close() cuts a backoff short: the event is dropped at once, not after the delay", async () => {
    vi.spyOn(Math, "random").mockReturnValue(1);
    const api = createFakeIntegrationApi();
    api.failNext(1, { status: 503 });
    const { drops, onDrop } = collectDrops();
    let failed: () => void = () => {};
    const firstFailure = new Promise<void>((resolve) => {
      failed = resolve;
    });
    const audit = createAuditClient({
      baseUrl,
      fetch: api.fetch,
      retry: { baseDelayMs: 600_000, maxDelayMs: 600_000 },
      onDrop,
      onError: () => failed(),
    });
    audit.record({ action: "a" });
    await firstFailure;
    expect(await audit.close({ timeoutMs: 0 })).toBe(false);
    expect(drops).toMatchObject([{ reason: "closed", count: 1, events: [{ action: "a" }] }]);
    expect(api.auditEvents).toEqual([]);
  });

  it("hands waitUntil a promise that settles once the queue is empty", async () => {
    serveEvents(created);
    const promises: Promise<unknown>[] = [];
    const audit = createAuditClient({ baseUrl, waitUntil: (promise) => promises.push(promise) });
    audit.record({ action: "a" });
    audit.record({ action: "b" });
    expect(promises).toHaveLength(1);
    expect(await promises[0]).toBe(true);
    expect(audit.stats().delivered).toBe(2);
    audit.record({ action: "c" });
    expect(promises).toHaveLength(2);
    await promises[1];
  });
});
