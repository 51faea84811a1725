import { describe, expect, it } from "vitest";
import { atLeastOne } from "../../../src/clients/integration-api/client-options.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";

const baseUrl = "https://integration.test";

describe("the clients' options", () => {
  it("accepts 0 ms per attempt and an unbounded total, and keeps them", () => {
    const { options } = createIntegrationApi({
      baseUrl,
      timeoutMs: 0,
      totalTimeoutMs: Number.POSITIVE_INFINITY,
      retry: { limit: 0, baseDelayMs: 0 },
    });
    expect(options).toMatchObject({
      timeoutMs: 0,
      totalTimeoutMs: Number.POSITIVE_INFINITY,
      retry: { limit: 0, baseDelayMs: 0 },
    });
  });

  it("refuses an unbounded wait where only the total may be unbounded", () => {
    for (const options of [
      { timeoutMs: Number.POSITIVE_INFINITY },
      { retry: { baseDelayMs: Number.POSITIVE_INFINITY } },
      { retry: { maxDelayMs: Number.POSITIVE_INFINITY } },
      { retry: { maxRetryAfterMs: Number.POSITIVE_INFINITY } },
    ]) {
      expect(() => createIntegrationApi({ baseUrl, ...options }), JSON.stringify(options)).toThrow(
        TypeError,
      );
    }
  });

  it("refuses negative, NaN and non-number durations, and negative retry limits", () => {
    for (const options of [
      { timeoutMs: -1 },
      { totalTimeoutMs: Number.NaN },
      { timeoutMs: "100" as unknown as number },
      { retry: { limit: -1 } },
    ]) {
      expect(() => createIntegrationApi({ baseUrl, ...options })).toThrow(TypeError);
    }
  });

  it("refuses a fetch option that is not a function", () => {
    const fetch = "https://integration.test" as unknown as typeof globalThis.fetch;
    expect(() => createIntegrationApi({ baseUrl, fetch })).toThrow(
      /fetch option must be a function/,
    );
  });

  it("refuses tls.rejectUnauthorized given as a string, as an unparsed environment variable would be", () => {
    const tls = { rejectUnauthorized: "false" as unknown as boolean };
    expect(() => createIntegrationApi({ baseUrl, tls })).toThrow(
      /rejectUnauthorized must be a boolean/,
    );
  });

  it("takes counts that must be at least 1 (the audit client's concurrency and bounds)", () => {
    expect(atLeastOne("concurrency", undefined, 4)).toBe(4);
    expect(atLeastOne("concurrency", 1, 4)).toBe(1);
    expect(() => atLeastOne("concurrency", 0, 4)).toThrow("concurrency must be at least 1.");
  });
});
