import { describe, expect, it } from "vitest";
import { Timestamp } from "../../../src/clients/integration-api/timestamp.ts";

describe("Timestamp", () => {
  it("keeps the platform's seven fractional digits and the original text", () => {
    const timestamp = Timestamp.parse("2015-12-01T00:00:00.1234567Z");
    expect(timestamp.text).toBe("2015-12-01T00:00:00.1234567Z");
    expect(timestamp.epochNanoseconds).toBe(1_448_928_000_123_456_700n);
    expect(timestamp.toDate().toISOString()).toBe("2015-12-01T00:00:00.123Z");
    expect(JSON.stringify({ at: timestamp })).toBe('{"at":"2015-12-01T00:00:00.1234567Z"}');
    expect(`${timestamp}`).toBe("2015-12-01T00:00:00.1234567Z");
  });

  it("orders instants that a Date cannot tell apart", () => {
    const earlier = Timestamp.parse("2016-01-01T21:00:00.0000001Z");
    const later = Timestamp.parse("2016-01-01T21:00:00.0000002Z");
    expect(earlier.toDate().getTime()).toBe(later.toDate().getTime());
    expect(earlier.compare(later)).toBeLessThan(0);
    expect(later.compare(earlier)).toBeGreaterThan(0);
    expect([later, earlier].sort(Timestamp.compare)).toEqual([earlier, later]);
    expect(earlier.equals(later)).toBe(false);
  });

  it("treats a missing zone as UTC and applies offsets", () => {
    const utc = Timestamp.parse("2015-12-01T00:00:00.0000000Z");
    expect(Timestamp.parse("2015-12-01T00:00:00.0000000").equals(utc)).toBe(true);
    expect(Timestamp.parse("2015-12-01T01:30:00+01:30").equals(utc)).toBe(true);
    expect(Timestamp.parse("2015-11-30T22:00:00-02:00").compare(utc)).toBe(0);
  });

  it("floors to the millisecond before 1970", () => {
    expect(Timestamp.parse("1969-12-31T23:59:59.9999999Z").toDate().toISOString()).toBe(
      "1969-12-31T23:59:59.999Z",
    );
  });

  it("rejects text that is not a valid ISO 8601 date-time", () => {
    for (const text of [
      "2015-12-01",
      "2015-02-30T00:00:00Z",
      "2015-12-01T24:00:00Z",
      "yesterday",
      "2015-12-01T00:00:00.1234567890Z",
    ]) {
      expect(() => Timestamp.parse(text), text).toThrow(RangeError);
    }
  });
});
