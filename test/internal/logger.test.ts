import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  asLogger,
  defaultLogger,
  type Logger,
  resolveLogger,
  takesFieldsFirst,
} from "../../src/internal/logger.ts";

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

describe("resolveLogger with pino", () => {
  /** A real pino logger writing its JSON lines into an array. */
  function pinoLines() {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: "debug" },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    return { logger, lines };
  }

  it("keeps every field as the line's own keys, as pino takes them: fields first", () => {
    const { logger, lines } = pinoLines();
    const resolved = resolveLogger(logger);
    resolved.warn("kept a message", { uuid: "u1", operation: "create", field: "email" });
    resolved.error("failed", { status: 503 });
    resolved.info("plain");
    resolved.debug("retrying", { attempt: 2 });
    expect(
      lines.map(({ level, msg, uuid, operation, field, status, attempt }) => ({
        level,
        msg,
        uuid,
        operation,
        field,
        status,
        attempt,
      })),
    ).toEqual([
      {
        level: 40,
        msg: "kept a message",
        uuid: "u1",
        operation: "create",
        field: "email",
        status: undefined,
        attempt: undefined,
      },
      {
        level: 50,
        msg: "failed",
        uuid: undefined,
        operation: undefined,
        field: undefined,
        status: 503,
        attempt: undefined,
      },
      {
        level: 30,
        msg: "plain",
        uuid: undefined,
        operation: undefined,
        field: undefined,
        status: undefined,
        attempt: undefined,
      },
      {
        level: 20,
        msg: "retrying",
        uuid: undefined,
        operation: undefined,
        field: undefined,
        status: undefined,
        attempt: 2,
      },
    ]);
  });

  it("knows a child logger, such as Fastify's request.log, for pino too", () => {
    const { logger, lines } = pinoLines();
    const child = logger.child({ reqId: "req-1" });
    expect(takesFieldsFirst(child)).toBe(true);
    resolveLogger(child).error("failed", { uuid: "u2" });
    expect(lines[0]).toMatchObject({ reqId: "req-1", uuid: "u2", msg: "failed" });
  });

  it("calls the other loggers message first, and takes no other object for pino", () => {
    expect(takesFieldsFirst(console)).toBe(false);
    expect(takesFieldsFirst({ debug() {}, info() {}, warn() {}, error() {}, child() {} })).toBe(
      false,
    );
    const calls: unknown[][] = [];
    const recorder = {
      debug: (...args: unknown[]) => calls.push(args),
      info: (...args: unknown[]) => calls.push(args),
      warn: (...args: unknown[]) => calls.push(args),
      error: (...args: unknown[]) => calls.push(args),
    };
    resolveLogger(recorder).warn("w", { uuid: "u" });
    expect(calls).toEqual([["w", { uuid: "u" }]]);
  });

  it("asLogger gives undefined for what is not a logger, so a framework's stand-in is skipped", () => {
    expect(asLogger(undefined)).toBeUndefined();
    expect(asLogger({ info() {} })).toBeUndefined();
    expect(asLogger(console)).toBeDefined();
  });
});
