import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuditClient } from "../../../src/clients/audit/index.ts";
import { createFakeIntegrationApi } from "../../../src/testing/fake-integration-api.ts";

const baseUrl = "http://platform.test:9880";
const retry = { baseDelayMs: 0, maxDelayMs: 0 };

afterEach(() => {
  vi.restoreAllMocks();
});

/** Errors thrown by microtasks, which the runtime would report as uncaught. */
function catchMicrotaskErrors(): unknown[] {
  const thrown: unknown[] = [];
  const queue = globalThis.queueMicrotask;
  vi.spyOn(globalThis, "queueMicrotask").mockImplementation((callback) =>
    queue(() => {
      try {
        callback();
      } catch (error) {
        thrown.push(error);
      }
    }),
  );
  return thrown;
}

describe("the application's hooks", () => {
  it("a throwing onError or onDrop stops nothing, and its error is rethrown on its own", async () => {
    const thrown = catchMicrotaskErrors();
    const api = createFakeIntegrationApi();
    const fromOnError = new Error("onError failed");
    const fromOnDrop = new Error("onDrop failed");
    const audit = createAuditClient({
      baseUrl,
      fetch: api.fetch,
      retry,
      maxQueueEvents: 1,
      onError: () => {
        throw fromOnError;
      },
      onDrop: () => {
        throw fromOnDrop;
      },
    });
    api.failNext(1, { status: 503 });
    audit.record({ action: "a" });
    audit.record({ action: "overflow" });
    expect(await audit.flush()).toBe(true);
    expect(api.auditEvents).toEqual([{ action: "a" }]);
    expect(audit.stats()).toMatchObject({ delivered: 1, dropped: 1, retried: 1, inFlight: 0 });
    expect(thrown).toEqual(expect.arrayContaining([fromOnError, fromOnDrop]));
    expect(thrown).toHaveLength(2);
  });
});
