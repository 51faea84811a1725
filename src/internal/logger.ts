/** Structured facts that go with a log message: counts, codes, operation names. */
export type LogFields = Record<string, unknown>;

/**
 * Where the SDK writes what it has to say: any object with these four methods, such as `console`,
 * a pino or winston logger. Each message is a whole sentence that stands on its own; `fields`
 * repeats its facts for loggers that keep structured data (console prints them, winston merges
 * them; pino takes extra arguments as format values, so it keeps the message only). The SDK
 * never passes a password, a shared secret or a bearer token to it.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const levels = ["debug", "info", "warn", "error"] as const;
const silent = () => {};

/**
 * The SDK's behaviour without a `logger` option: warnings and errors to the console, looked up at
 * each call (so a test's spy or a patched console sees them), debug and info nowhere.
 */
export const defaultLogger: Logger = {
  debug: silent,
  info: silent,
  warn: (message, fields) =>
    fields === undefined ? console.warn(message) : console.warn(message, fields),
  error: (message, fields) =>
    fields === undefined ? console.error(message) : console.error(message, fields),
};

/**
 * The `logger` option, checked once when a client or handler is created: the default when
 * absent, a TypeError naming the missing method otherwise. Methods are bound, so a class-based
 * logger keeps its `this`.
 */
export function resolveLogger(logger: Logger | undefined): Logger {
  if (logger === undefined) return defaultLogger;
  if (typeof logger !== "object" || logger === null) {
    throw new TypeError(
      "The logger option must be an object with debug, info, warn and error methods (console, pino, winston).",
    );
  }
  const missing = levels.filter((level) => typeof logger[level] !== "function");
  if (missing.length > 0) {
    throw new TypeError(`The logger option has no ${missing.join(", ")} method.`);
  }
  return {
    debug: logger.debug.bind(logger),
    info: logger.info.bind(logger),
    warn: logger.warn.bind(logger),
    error: logger.error.bind(logger),
  };
}
