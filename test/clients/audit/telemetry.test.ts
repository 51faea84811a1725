import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuditClient } from "../../../src/clients/audit/index.ts";
import { loadOpenTelemetry } from "../../../src/internal/telemetry.ts";
import { installInMemoryOpenTelemetry } from "../../support/open-telemetry.ts";
import { hangingFetch } from "./test-doubles.ts";

let otel: ReturnType<typeof installInMemoryOpenTelemetry>;
beforeAll(() => {
  otel = installInMemoryOpenTelemetry();
});
afterAll(() => otel.stop());

const values = async (name: string) => (await otel.metric(name)).map((point) => point.value);

describe("the audit client's metrics", () => {
  it("count queued and in-flight events and their bytes, until the client closes", async () => {
    const audit = createAuditClient({
      baseUrl: "http://platform.test:9880",
      fetch: hangingFetch,
      concurrency: 1,
      onDrop: () => {},
    });
    await loadOpenTelemetry();
    for (const action of ["a.1", "a.2", "a.3"]) audit.record({ action });
    await Promise.resolve();
    expect(audit.stats()).toMatchObject({ queued: 2, inFlight: 1 });
    expect(await values("platform_integration.audit.queue.events")).toEqual([3]);
    expect(await values("platform_integration.audit.queue.bytes")).toEqual([
      3 * '{"action":"a.1"}'.length,
    ]);
    await audit.close({ timeoutMs: 0 });
    expect(audit.stats().droppedByReason.closed).toBe(3);
    // No longer observed: the exporter keeps the last values, which predate the drops at close.
    expect(await otel.metric("platform_integration.audit.dropped")).toContainEqual({
      attributes: { "platform_integration.audit.drop_reason": "closed" },
      value: 0,
    });
  });
});
