import { afterEach, describe, expect, it, vi } from "vitest";
import { type AuditDrop, createAuditClient } from "../../../src/clients/audit/index.ts";
import { createVersionClient } from "../../../src/clients/version/index.ts";

afterEach(() => vi.unstubAllEnvs());

function newerInstall() {
  vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
  vi.stubEnv("PLATFORM_SDK_API", "http://replicated:3000");
}

function capture() {
  const lines: string[] = [];
  const logger = {
    debug: () => {},
    info: () => {},
    warn: (message: string) => lines.push(message),
    error: (message: string) => lines.push(message),
  };
  return { lines, logger };
}

// Issue 39, finding 11: there is no Audit API on the newer install methods.
describe("the audit client on a newer install", () => {
  it("says at construction, once, that there is no Audit API and what to do instead", () => {
    newerInstall();
    const { lines, logger } = capture();
    const audit = createAuditClient({ logger, onDrop: () => {} });
    expect(audit.capabilities.audit).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      "PLATFORM_INTEGRATIONAPI is not set (nor the baseUrl option), so this is one of the platform's newer install methods, which run no Audit API",
    );
    expect(lines[0]).toContain("sink function of the application's own");
    expect(lines[0]).toContain("OpenTelemetry logs");
    expect(lines[0]).not.toMatch(/set the PLATFORM_INTEGRATIONAPI/);
  });

  it("drops each event at once as configuration, without waiting for close()", async () => {
    newerInstall();
    const drops: AuditDrop[] = [];
    const audit = createAuditClient({
      logger: capture().logger,
      onDrop: (drop) => drops.push(drop),
    });
    audit.record({ action: "user.login" });
    audit.record({ action: "user.logout" });
    await Promise.resolve();
    expect(drops).toEqual([
      expect.objectContaining({
        reason: "configuration",
        count: 2,
        error: expect.objectContaining({ name: "UnsupportedOperationError" }),
      }),
    ]);
    expect(audit.stats()).toMatchObject({ queued: 0, dropped: 2 });
    expect(audit.stats().configurationError).toContain("no Audit API");
    expect(await audit.flush()).toBe(true);
    await expect(audit.send({ action: "user.login" })).rejects.toMatchObject({
      name: "UnsupportedOperationError",
    });
    // An invalid event is still refused where it is recorded.
    expect(() => audit.record({ action: "" })).toThrow();
  });

  it("keeps the Integration API where PLATFORM_INTEGRATIONAPI or a baseUrl names it", () => {
    vi.stubEnv("PLATFORM_SDK_API", "http://replicated:3000");
    expect(createAuditClient({ baseUrl: "https://platform.test" }).capabilities.audit).toBe(true);
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "https://platform.test");
    expect(createAuditClient().capabilities.audit).toBe(true);
  });
});

describe("createAuditClient({ sink })", () => {
  it("passes each valid event to the application's sink, waits for it on flush, reports its failures", async () => {
    newerInstall();
    const received: unknown[] = [];
    const drops: AuditDrop[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { lines, logger } = capture();
    const audit = createAuditClient({
      logger,
      onDrop: (drop) => drops.push(drop),
      sink: async (event) => {
        await gate;
        if (event.action === "fail") throw new Error("disk full");
        received.push(event);
      },
    });
    expect(lines).toEqual([]);
    audit.record({ action: "user.login", name: "bob" });
    audit.record({ action: "fail" });
    expect(audit.stats().inFlight).toBe(2);
    expect(await audit.flush({ timeoutMs: 0 })).toBe(false);
    release();
    expect(await audit.flush()).toBe(true);
    expect(received).toEqual([{ action: "user.login", name: "bob" }]);
    expect(drops).toEqual([expect.objectContaining({ reason: "rejected", count: 1 })]);
    expect(audit.stats()).toMatchObject({ delivered: 1, dropped: 1, inFlight: 0 });
    await expect(audit.send({ action: "fail" })).rejects.toThrow("disk full");
    expect(() => audit.record({ action: "" })).toThrow();
    expect(await audit.close()).toBe(true);
    audit.record({ action: "late" });
    await Promise.resolve();
    expect(drops.at(-1)).toMatchObject({ reason: "closed", count: 1 });
  });

  it("refuses a sink that is not a function", () => {
    expect(() => createAuditClient({ sink: "log" as never })).toThrow(TypeError);
  });

  // Issue 39's fixes, M4 (a) and m6: every event reaches the sink or onDrop, bounded as the queue.
  it("close() drops what a hanging sink still holds as closed, and a late settling counts nothing", async () => {
    let settle = () => {};
    const drops: AuditDrop[] = [];
    const audit = createAuditClient({
      onDrop: (drop) => drops.push(drop),
      sink: () =>
        new Promise<void>((resolve) => {
          settle = resolve;
        }),
    });
    audit.record({ action: "user.login" });
    expect(await audit.close({ timeoutMs: 0 })).toBe(false);
    expect(drops).toEqual([expect.objectContaining({ reason: "closed", count: 1 })]);
    settle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(audit.stats()).toMatchObject({ inFlight: 0, delivered: 0, dropped: 1 });
  });

  // Catches: the sink client's own wait (its own copy of the buffer's) that listened for an
  // abort the signal had already made, and so waited for the sink or the whole time-out.
  it("flush() with an aborted signal answers false at once while the sink holds an event", async () => {
    const audit = createAuditClient({ sink: () => new Promise<void>(() => {}) });
    audit.record({ action: "a" });
    const flushed = audit.flush({ signal: AbortSignal.abort(), timeoutMs: 60_000 });
    const later = new Promise((resolve) => setImmediate(resolve, "still waiting"));
    expect(await Promise.race([flushed, later])).toBe(false);
    expect(audit.stats()).toMatchObject({ inFlight: 1, bytes: 14 });
  });

  it("holds at most maxQueueEvents and maxQueueBytes unsettled: more are dropped as overflow", async () => {
    const drops: AuditDrop[] = [];
    const audit = createAuditClient({
      maxQueueEvents: 3,
      onDrop: (drop) => drops.push(drop),
      sink: () => new Promise<void>(() => {}),
    });
    for (let index = 0; index < 10; index++) audit.record({ action: "a" });
    await Promise.resolve();
    expect(audit.stats()).toMatchObject({ inFlight: 3, dropped: 7 });
    expect(drops).toEqual([expect.objectContaining({ reason: "overflow", count: 7 })]);

    const bytes = createAuditClient({
      maxQueueBytes: 40,
      onDrop: (drop) => drops.push(drop),
      sink: () => new Promise<void>(() => {}),
    });
    bytes.record({ action: "a".repeat(20) });
    bytes.record({ action: "b".repeat(20) });
    await Promise.resolve();
    expect(bytes.stats()).toMatchObject({ inFlight: 1, dropped: 1 });
  });

  // Issue 39's fixes, M5: the Version client's rule, with neither variable set.
  it.each([
    ["neither variable", {}, false],
    ["PLATFORM_SDK_API only", { PLATFORM_SDK_API: "http://replicated:3000" }, false],
    ["PLATFORM_INTEGRATIONAPI", { PLATFORM_INTEGRATIONAPI: "http://10.0.0.1:3000" }, true],
    [
      "both",
      {
        PLATFORM_INTEGRATIONAPI: "http://10.0.0.1:3000",
        PLATFORM_SDK_API: "http://replicated:3000",
      },
      true,
    ],
  ])("with %s set, agrees with the Version client's api", async (_, env, audits) => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
    vi.stubEnv("PLATFORM_SDK_API", "");
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const { lines, logger } = capture();
    const drops: AuditDrop[] = [];
    const audit = createAuditClient({ logger, onDrop: (drop) => drops.push(drop), fetch: hang });
    const version = createVersionClient();
    expect(audit.capabilities.audit).toBe(audits);
    expect(version.api).toBe(audits ? "integration" : "sdk");
    expect(lines).toHaveLength(audits ? 0 : 1);
    audit.record({ action: "user.login" });
    await Promise.resolve();
    expect(drops).toHaveLength(audits ? 0 : 1);
    if (!audits) {
      expect(lines[0]).toContain("PLATFORM_INTEGRATIONAPI");
      expect(lines[0]).toContain("PLATFORM_SDK_API");
      expect(audit.stats().configurationError).toContain("set PLATFORM_INTEGRATIONAPI");
    }
    await audit.close({ timeoutMs: 0 });
  });
});

/** A fetch that never answers until aborted. */
function hang(request: Request): Promise<Response> {
  return new Promise((_, reject) => {
    request.signal.addEventListener("abort", () => reject(request.signal.reason));
  });
}
