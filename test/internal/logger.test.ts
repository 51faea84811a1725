import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultLogger, type Logger, resolveLogger } from "../../src/internal/logger.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("resolveLogger", () => {
  it("defaults to warnings and errors on the console, debug and info silent", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const logger = resolveLogger(undefined);
    expect(logger).toBe(defaultLogger);
    logger.debug("d");
    logger.info("i", { a: 1 });
    logger.warn("w");
    logger.warn("w2", { count: 2 });
    logger.error("e", { code: "x" });
    expect(warn.mock.calls).toEqual([["w"], ["w2", { count: 2 }]]);
    expect(error.mock.calls).toEqual([["e", { code: "x" }]]);
    expect([debug, info, log].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
  });

  it("takes console, or a class-based logger whose methods need their this", () => {
    class Recorder implements Logger {
      lines: string[] = [];
      debug(message: string) {
        this.lines.push(`debug ${message}`);
      }
      info(message: string) {
        this.lines.push(`info ${message}`);
      }
      warn(message: string) {
        this.lines.push(`warn ${message}`);
      }
      error(message: string) {
        this.lines.push(`error ${message}`);
      }
    }
    const recorder = new Recorder();
    const { debug, info, warn, error } = resolveLogger(recorder);
    debug("a");
    info("b");
    warn("c");
    error("d");
    expect(recorder.lines).toEqual(["debug a", "info b", "warn c", "error d"]);
    expect(() => resolveLogger(console)).not.toThrow();
  });

  it("names what is missing from a wrong logger", () => {
    expect(() => resolveLogger({ info() {}, warn() {} } as unknown as Logger)).toThrow(
      "The logger option has no debug, error method.",
    );
    expect(() => resolveLogger("console" as unknown as Logger)).toThrow(/must be an object/);
    expect(() => resolveLogger(null as unknown as Logger)).toThrow(/must be an object/);
  });
});
