import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAuditClient } from "../../../src/clients/audit/audit-client.ts";
import { createIdentityClient } from "../../../src/clients/identity/identity-client.ts";
import { createVersionClient } from "../../../src/clients/version/version-client.ts";
import type { Logger } from "../../../src/internal/logger.ts";
import { loadOpenTelemetry } from "../../../src/internal/telemetry.ts";
import { createFakeIntegrationApi } from "../../../src/testing/fake-integration-api.ts";
import { installInMemoryOpenTelemetry } from "../../support/open-telemetry.ts";

const baseUrl = "http://platform.test:9880";
const retry = { baseDelayMs: 0, maxDelayMs: 0 };

function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, ...(fields === undefined ? {} : { fields }) });
  const logger: Logger = {
    debug: record("debug"),
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
  };
  return { logger, lines, text: () => JSON.stringify(lines) };
}

describe("the audit client's stats() and logger", () => {
  it("counts retries, drops by reason and the last error", async () => {
    const api = createFakeIntegrationApi();
    const { logger, lines } = recordingLogger();
    const audit = createAuditClient({
      baseUrl,
      fetch: api.fetch,
      retry,
      logger,
      maxQueueEvents: 2,
    });
    api.failNext(2, { status: 503 });
    audit.record({ action: "a.one" });
    audit.record({ action: "a.two" });
    audit.record({ action: "a.overflow" });
    expect(await audit.flush()).toBe(true);
    api.failNext(1, { status: 400 });
    audit.record({ action: "a.rejected" });
    expect(await audit.flush()).toBe(true);
    const stats = audit.stats();
    expect(stats).toMatchObject({ delivered: 2, dropped: 2, retried: 2 });
    expect(stats.droppedByReason).toEqual({
      overflow: 1,
      rejected: 1,
      redirected: 0,
      configuration: 0,
      closed: 0,
      exit: 0,
      spool_full: 0,
      spool_failed: 0,
      spool_damaged: 0,
    });
    expect(stats.lastError?.message).toMatch(/answered 400/);
    expect(Date.parse(stats.lastError?.at ?? "")).not.toBeNaN();
    // Without onDrop and onError, drops are warnings and retries debug lines on the given logger.
    expect(lines.filter((line) => line.level === "warn").map((line) => line.message)).toEqual([
      expect.stringMatching(/^platform-integration: dropped 1 audit event \(overflow\)/),
      expect.stringMatching(/^platform-integration: dropped 1 audit event \(rejected\): .*400/),
    ]);
    expect(lines.filter((line) => line.level === "debug")).toHaveLength(2);
    await audit.close();
  });

  it("logs the configuration error that stops delivery once, at error, without credentials", async () => {
    const { logger, lines, text } = recordingLogger();
    const audit = createAuditClient({
      baseUrl: "https://auditor:s3cret-password@platform.test",
      fetch: () => Promise.reject(new Error("unreachable")),
      logger,
    });
    audit.record({ action: "a.one" });
    audit.record({ action: "a.two" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lines.filter((line) => line.level === "error")).toHaveLength(1);
    expect(lines[0]?.message).toMatch(/audit delivery stopped.*user name or password/);
    expect(audit.stats().configurationError).toMatch(/user name or password/);
    await audit.close({ timeoutMs: 0 });
    expect(text()).not.toContain("s3cret");
    expect(JSON.stringify(audit.stats())).not.toContain("s3cret");
  });

  it("refuses a logger without the four methods", () => {
    expect(() => createAuditClient({ logger: { warn() {} } as unknown as Logger })).toThrow(
      "The logger option has no debug, info, error method.",
    );
  });
});

describe("the version client's logger", () => {
  it("logs each retry at debug, with the URL and no credentials", async () => {
    const api = createFakeIntegrationApi();
    const { logger, lines } = recordingLogger();
    const version = createVersionClient({
      api: "integration",
      baseUrl,
      fetch: api.fetch,
      retry,
      logger,
    });
    api.failNext(1, { status: 502 });
    await version.current();
    expect(lines).toEqual([
      {
        level: "debug",
        message: expect.stringMatching(
          /^platform-integration: GET http:\/\/platform\.test:9880\/version\/v1\/current answered 502\..* Retrying in 0 ms \(retry 1 of 2\)\.$/,
        ),
        fields: { method: "GET", url: `${baseUrl}/version/v1/current`, attempts: 1, delayMs: 0 },
      },
    ]);
  });
});

describe("OpenTelemetry on the clients", () => {
  let otel: ReturnType<typeof installInMemoryOpenTelemetry>;
  beforeAll(() => {
    otel = installInMemoryOpenTelemetry();
  });
  afterAll(() => otel.stop());
  beforeEach(() => otel.resetSpans());

  it("makes a CLIENT span per attempt, the retry with its resend count", async () => {
    const api = createFakeIntegrationApi();
    const version = createVersionClient({ api: "integration", baseUrl, fetch: api.fetch, retry });
    api.failNext(1, { status: 503 });
    await version.current();
    const spans = otel.spans().map((span) => ({
      name: span.name,
      kind: span.kind,
      status: span.status.code,
      attributes: span.attributes,
    }));
    const common = {
      "http.request.method": "GET",
      "server.address": "platform.test",
      "server.port": 9880,
      "url.full": `${baseUrl}/version/v1/current`,
    };
    expect(spans).toEqual([
      {
        name: "GET",
        kind: otel.api.SpanKind.CLIENT,
        status: otel.api.SpanStatusCode.ERROR,
        attributes: { ...common, "http.response.status_code": 503, "error.type": "503" },
      },
      {
        name: "GET",
        kind: otel.api.SpanKind.CLIENT,
        status: otel.api.SpanStatusCode.UNSET,
        attributes: { ...common, "http.request.resend_count": 1, "http.response.status_code": 200 },
      },
    ]);
    const durations = await otel.metric("http.client.request.duration");
    expect(durations.map((point) => point.attributes["http.response.status_code"]).sort()).toEqual([
      200, 503,
    ]);
  });

  it("keeps a login's password out of spans, logs and the error", async () => {
    const api = createFakeIntegrationApi();
    const { logger, text } = recordingLogger();
    const identity = createIdentityClient({ baseUrl, fetch: api.fetch, retry, logger });
    const password = "correct-horse-battery-staple";
    // The fake knows no bob: the login is refused, an answer rather than an exception.
    const failure = await identity.login({ username: "bob", password }).catch((error) => error);
    expect(failure).toMatchObject({ authenticated: false });
    const spans = otel.spans();
    expect(spans.map((span) => span.attributes["url.full"])).toContain(
      `${baseUrl}/identity/v1/login`,
    );
    for (const seen of [JSON.stringify(spans.map((span) => span.attributes)), text()]) {
      expect(seen).not.toContain(password);
    }
    expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain(password);
  });

  it("makes a span per audit delivery attempt, and a network failure's error.type", async () => {
    const api = createFakeIntegrationApi();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, retry });
    api.failNext(1, { networkError: true });
    audit.record({ action: "a.one" });
    expect(await audit.flush()).toBe(true);
    expect(otel.spans().map((span) => span.attributes["error.type"] ?? "ok")).toEqual([
      "TypeError",
      "ok",
    ]);
    expect(otel.spans().every((span) => span.name === "POST")).toBe(true);
    await audit.close();
  });

  it("exports the audit figures as metrics, read from stats() on collection", async () => {
    const api = createFakeIntegrationApi();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, retry, maxQueueEvents: 1 });
    await loadOpenTelemetry();
    api.failNext(1, { status: 500 });
    audit.record({ action: "a.one" });
    audit.record({ action: "a.overflow" });
    expect(await audit.flush()).toBe(true);
    const value = async (name: string) => (await otel.metric(name)).map((point) => point.value);
    expect(await value("platform_integration.audit.delivered")).toEqual([1]);
    expect(await value("platform_integration.audit.retried")).toEqual([1]);
    expect(await value("platform_integration.audit.queue.events")).toEqual([0]);
    expect(await value("platform_integration.audit.queue.bytes")).toEqual([0]);
    const dropped = await otel.metric("platform_integration.audit.dropped");
    expect(dropped).toContainEqual({
      attributes: { "platform_integration.audit.drop_reason": "overflow" },
      value: 1,
    });
    await audit.close();
  });
});
