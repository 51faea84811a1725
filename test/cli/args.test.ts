import { describe, expect, it } from "vitest";
import { durationOption, parseTargetCommandLine } from "../../src/cli/args.ts";
import { UsageError } from "../../src/cli/command.ts";

describe("durationOption", () => {
  it("reads 500ms, 10s, 1.5s, 5m and 1h, and a bare number in the option's own unit", () => {
    const ms = { fallback: 7, bareUnitMs: 1 } as const;
    expect(durationOption("500ms", "timeout", ms)).toBe(500);
    expect(durationOption("10s", "timeout", ms)).toBe(10_000);
    expect(durationOption("1.5s", "timeout", ms)).toBe(1500);
    expect(durationOption("5m", "timeout", ms)).toBe(300_000);
    expect(durationOption("1h", "timeout", ms)).toBe(3_600_000);
    expect(durationOption("2500", "timeout", ms)).toBe(2500);
    expect(durationOption("60", "interval", { fallback: 7, bareUnitMs: 1000 })).toBe(60_000);
    expect(durationOption(undefined, "timeout", ms)).toBe(7);
  });

  it("refuses what is not a time of at least 1 ms, naming the option and the forms it takes", () => {
    for (const text of ["0", "0s", "0.1ms", "-1s", "10 sec", "s", "", "1e3", "Infinity"]) {
      expect(() => durationOption(text, "timeout", { fallback: 1, bareUnitMs: 1 }), text).toThrow(
        new UsageError(
          `--timeout takes a time such as 500ms, 10s, 5m or 1h (a bare number is milliseconds), not "${text}"`,
        ),
      );
    }
  });
});

describe("--timeout of the commands that call a Provisioning API", () => {
  it("takes 10s as it takes 10000", () => {
    const parse = (timeout: string) =>
      parseTargetCommandLine(
        ["http://127.0.0.1:1", "--timeout", timeout],
        {},
        { defaultTimeoutMs: 1 },
      ).timeoutMs;
    expect(parse("10s")).toBe(10_000);
    expect(parse("10000")).toBe(10_000);
    expect(parse("500ms")).toBe(500);
  });
});
