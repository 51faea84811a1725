/** Structured facts that go with a log message: counts, codes, operation names. */
export type LogFields = Record<string, unknown>;

/**
 * Where the SDK writes what it has to say: `console`, a pino or winston logger, Fastify's
 * `app.log` or `request.log`, or any object with these four methods. Each message is a whole
 * sentence that stands on its own; `fields` repeats its facts (uuid, operation, status) for
 * loggers that keep structured data, and every logger keeps them: console prints them, winston
 * merges them into the entry, and a pino logger (Fastify's included) is called the pino way,
 * `warn(fields, message)`, so that they become the line's own keys. Another logger that takes its
 * fields first needs a four-line adapter to this interface. The SDK never passes a password, a
 * shared secret or a bearer token to it.
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
 * Whether a logger takes its fields before its message, as pino does (`log.warn({ uuid }, "…")`):
 * a pino instance or child carries pino's registered symbols, Fastify's `app.log` and
 * `request.log` among them. Called the other way, pino takes the fields for format values and
 * drops them. Fastify's stand-in when its logging is off is not pino, and says nothing.
 */
export function takesFieldsFirst(logger: object): boolean {
  return Symbol.for("pino.serializers") in logger;
}

/**
 * A value as a logger, methods bound (so a class-based logger keeps its `this`) and called the way
 * it takes its fields; undefined when it lacks one of the four methods. The one home of the rule
 * for every logger the SDK is given: an option, or a framework's per-request logger.
 */
export function asLogger(value: unknown): Logger | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const logger = value as Record<(typeof levels)[number], unknown>;
  if (levels.some((level) => typeof logger[level] !== "function")) return undefined;
  const given = value as Logger;
  if (takesFieldsFirst(value)) {
    const fieldsFirst = given as unknown as Record<
      (typeof levels)[number],
      (first: unknown, message?: string) => void
    >;
    const call = (level: (typeof levels)[number]) => {
      const method = fieldsFirst[level].bind(given);
      return (message: string, fields?: LogFields) =>
        fields === undefined ? method(message) : method(fields, message);
    };
    return { debug: call("debug"), info: call("info"), warn: call("warn"), error: call("error") };
  }
  return {
    debug: given.debug.bind(given),
    info: given.info.bind(given),
    warn: given.warn.bind(given),
    error: given.error.bind(given),
  };
}

/**
 * The `logger` option, checked once when a client or handler is created: the default when
 * absent, a TypeError naming the missing method otherwise.
 */
export function resolveLogger(logger: Logger | undefined): Logger {
  if (logger === undefined) return defaultLogger;
  if (typeof logger !== "object" || logger === null) {
    throw new TypeError(
      "The logger option must be an object with debug, info, warn and error methods (console, pino, winston).",
    );
  }
  const resolved = asLogger(logger);
  if (resolved === undefined) {
    const missing = levels.filter((level) => typeof logger[level] !== "function");
    throw new TypeError(`The logger option has no ${missing.join(", ")} method.`);
  }
  return resolved;
}
