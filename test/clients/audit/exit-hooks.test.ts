// The client's part at process exit, in process: exit.test.ts runs real exits in child processes,
// whose code mutation testing cannot see. Here the process's `beforeExit` and `exit` listeners are
// captured instead of installed, and called as Node would.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFakeIntegrationApi } from "../../../src/testing/fake-integration-api.ts";
import { tempDir } from "./spool/spool-helpers.ts";
import { collectDrops, hangingFetch } from "./test-doubles.ts";

type AuditModule = typeof import("../../../src/clients/audit/index.ts");
let createAuditClient: AuditModule["createAuditClient"];
let isConfigurationError: AuditModule["isConfigurationError"];

const baseUrl = "http://platform.test:9880";
const listeners = new Map<string, () => void>();
let installs = 0;

// Fresh modules before each test, since the hooks install their listeners once per module; in
// beforeEach, not beforeAll, because mutation testing activates its mutant for each test.
beforeEach(async () => {
  vi.resetModules();
  listeners.clear();
  const { unwatchExit, watchExit } = await import("../../../src/clients/audit/exit-hooks.ts");
  ({ createAuditClient, isConfigurationError } = await import(
    "../../../src/clients/audit/index.ts"
  ));
  const on = vi.spyOn(process, "on").mockImplementation(((event: string, listener: () => void) => {
    listeners.set(event, listener);
    return process;
  }) as typeof process.on);
  const probe = { beforeExit() {}, exit() {} };
  watchExit(probe);
  watchExit(probe);
  unwatchExit(probe);
  installs = on.mock.calls.length;
  on.mockRestore();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function emit(event: "beforeExit" | "exit"): void {
  const listener = listeners.get(event);
  if (listener === undefined) throw new Error(`no ${event} listener was installed`);
  listener();
}

/** After "a" was recorded: the client was not closed, so "b" is delivered too, and nothing dropped. */
async function expectStillOpen(
  audit: ReturnType<AuditModule["createAuditClient"]>,
  api: ReturnType<typeof createFakeIntegrationApi>,
  drops: unknown[],
): Promise<void> {
  audit.record({ action: "b" });
  expect(await audit.flush()).toBe(true);
  expect(api.auditEvents).toEqual([{ action: "a" }, { action: "b" }]);
  expect(drops).toEqual([]);
  await audit.close();
}

describe("the audit client at process exit", () => {
  it("installs one beforeExit and one exit listener, once for every client", () => {
    expect([...listeners.keys()]).toEqual(["beforeExit", "exit"]);
    expect(installs).toBe(2);
  });

  it("reports what is in flight and queued as one exit drop", async () => {
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: hangingFetch, concurrency: 1, onDrop });
    audit.record({ action: "a" });
    audit.record({ action: "b" });
    await Promise.resolve(); // the slot has taken "a"
    expect(audit.stats()).toMatchObject({ queued: 1, inFlight: 1 });
    emit("exit");
    expect(drops).toEqual([
      { reason: "exit", count: 2, events: [{ action: "a" }, { action: "b" }] },
    ]);
    expect(audit.stats()).toMatchObject({ dropped: 2, droppedByReason: { exit: 2 } });
    await audit.close({ timeoutMs: 0 });
  });

  it("reports the events of a client stopped by a configuration error as configuration, with it", async () => {
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({
      baseUrl: "http://127.0.0.1:1",
      tls: { rejectUnauthorized: false }, // on an http: URL: a configuration error
      onDrop,
      onError: () => {},
    });
    audit.record({ action: "a" });
    expect(await audit.flush()).toBe(false);
    emit("exit");
    expect(drops).toMatchObject([{ reason: "configuration", count: 1, events: [{ action: "a" }] }]);
    expect(isConfigurationError(drops[0]?.error)).toBe(true);
    await audit.close({ timeoutMs: 0 });
  });

  it("forgets a client once its queue is empty: beforeExit leaves it open, even with flushOnExit", async () => {
    const api = createFakeIntegrationApi();
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, flushOnExit: true, onDrop });
    audit.record({ action: "a" });
    expect(await audit.flush()).toBe(true);
    emit("beforeExit");
    emit("exit");
    await expectStillOpen(audit, api, drops);
  });

  it("leaves a client that never held an event out of beforeExit, even with flushOnExit", async () => {
    const api = createFakeIntegrationApi();
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, flushOnExit: true, onDrop });
    emit("beforeExit");
    audit.record({ action: "a" });
    expect(await audit.flush()).toBe(true);
    expect(api.auditEvents).toEqual([{ action: "a" }]);
    expect(drops).toEqual([]);
    await audit.close();
  });

  it("with flushOnExit, closes a busy client at beforeExit, delivering what it holds", async () => {
    const api = createFakeIntegrationApi();
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, flushOnExit: true, onDrop });
    audit.record({ action: "a" });
    emit("beforeExit");
    // Closed: a later event is dropped as closed, and the one recorded before is delivered.
    audit.record({ action: "late" });
    expect(await audit.flush()).toBe(true);
    await Promise.resolve();
    expect(api.auditEvents).toEqual([{ action: "a" }]);
    expect(drops).toEqual([{ reason: "closed", count: 1, events: [{ action: "late" }] }]);
  });

  it("without flushOnExit, leaves a busy client open at beforeExit", async () => {
    const api = createFakeIntegrationApi();
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, onDrop });
    audit.record({ action: "a" });
    emit("beforeExit");
    await expectStillOpen(audit, api, drops);
  });

  it("with a spool, writes at exit the events still waiting for a commit, for the next client", async () => {
    const dir = tempDir();
    const { drops, onDrop } = collectDrops();
    const first = createAuditClient({ baseUrl, fetch: hangingFetch, spool: dir, onDrop });
    for (const action of ["a", "b", "c"]) first.record({ action });
    // Watched although its buffer is empty: the events wait in the spool for their commit.
    expect(first.stats()).toMatchObject({ queued: 0, inFlight: 0, spooled: 3 });
    emit("exit");
    expect(drops).toEqual([]);

    const api = createFakeIntegrationApi();
    const next = createAuditClient({ baseUrl, fetch: api.fetch, spool: dir, concurrency: 1 });
    expect(await next.flush()).toBe(true);
    expect(api.auditEvents).toEqual([{ action: "a" }, { action: "b" }, { action: "c" }]);
    await next.close();
  });
});

// Issue 39's fixes, M4 (b): the sink client keeps the API client's exit guarantees.
describe("the sink audit client at process exit", () => {
  it("drops what the sink still holds at exit as exit, each event once", async () => {
    const { drops, onDrop } = collectDrops();
    const audit = createAuditClient({ sink: () => new Promise<void>(() => {}), onDrop });
    audit.record({ action: "a" });
    emit("exit");
    expect(drops).toMatchObject([{ reason: "exit", count: 1, events: [{ action: "a" }] }]);
    expect(audit.stats()).toMatchObject({ inFlight: 0, dropped: 1 });
  });

  it("with flushOnExit, closes on beforeExit and waits for the sink", async () => {
    const { drops, onDrop } = collectDrops();
    let release = () => {};
    const received: unknown[] = [];
    const audit = createAuditClient({
      flushOnExit: true,
      onDrop,
      sink: (event) =>
        new Promise<void>((resolve) => {
          release = () => {
            received.push(event);
            resolve();
          };
        }),
    });
    audit.record({ action: "a" });
    emit("beforeExit");
    release();
    await audit.flush();
    audit.record({ action: "after close" });
    await Promise.resolve();
    expect(received).toEqual([{ action: "a" }]);
    expect(drops).toMatchObject([{ reason: "closed", count: 1 }]);
  });
});
