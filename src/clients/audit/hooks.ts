import type { Logger } from "../../internal/logger.ts";
import { isConfigurationError } from "../integration-api/errors.ts";
import { count } from "../integration-api/options.ts";
import type { AuditDrop } from "./audit-types.ts";

/** A count option that must be at least 1, or its default. */
export function atLeastOne(name: string, value: number | undefined, fallback: number): number {
  const result = count(name, value, fallback);
  if (result < 1) throw new TypeError(`${name} must be at least 1.`);
  return result;
}

/**
 * Runs an application hook so that its exception can neither corrupt the queue nor vanish: it is
 * rethrown on its own, where the runtime reports uncaught errors.
 */
export function callHook<T>(hook: (value: T) => void, value: T): void {
  try {
    hook(value);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

/** The default `onDrop`: one warning per report. */
export function warnDrop(logger: Logger, { reason, count, error }: AuditDrop): void {
  const cause = error instanceof Error ? `: ${error.message.replace(/\.$/, "")}` : "";
  logger.warn(
    `platform-integration: dropped ${count} audit event${count === 1 ? "" : "s"} (${reason})${cause}. Pass onDrop to createAuditClient to handle drops.`,
  );
}

/**
 * The default `onError`: a failure that will be retried at debug level; the configuration error
 * that stops delivery at error level, once.
 */
export function reportDeliveryError(logger: Logger, error: unknown): void {
  if (!isConfigurationError(error)) {
    logger.debug(
      `platform-integration: an audit delivery attempt failed and will be retried: ${error instanceof Error ? error.message : String(error)}`,
    );
    return;
  }
  logger.error(
    `platform-integration: audit delivery stopped, events are kept until the client closes: ${error.message}`,
  );
}
