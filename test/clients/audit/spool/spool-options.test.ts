import { describe, expect, it } from "vitest";
import { normalizeSpoolOptions } from "../../../../src/clients/audit/spool/spool-options.ts";

describe("normalizeSpoolOptions", () => {
  it("takes a directory path alone, with the documented defaults", () => {
    expect(normalizeSpoolOptions("./spool")).toEqual({
      dir: "./spool",
      maxEvents: 100_000,
      maxBytes: 64 * 1024 * 1024,
      commitDelayMs: 0,
      segmentBytes: 1024 * 1024,
    });
  });

  it("refuses a missing or empty directory, and names the option it refuses", () => {
    for (const input of ["", { dir: "" }, { dir: 5 }, null]) {
      expect(() => normalizeSpoolOptions(input as string), JSON.stringify(input)).toThrow(
        /^The spool option is a directory path/,
      );
    }
    for (const name of ["maxEvents", "maxBytes", "commitDelayMs", "segmentBytes"]) {
      expect(() => normalizeSpoolOptions({ dir: "d", [name]: -1 }), name).toThrow(
        new RegExp(`^spool\\.${name} must be`),
      );
    }
  });
});
