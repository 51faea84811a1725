// The application's hooks as the Audit client calls them: a throwing hook stops nothing, and the
// default onDrop and onError say what happened on the client's logger.
import type { Logger } from "../../internal/logger.ts";
import { isConfigurationError } from "../integration-api/errors.ts";
import type { AuditDrop } from "./audit-types.ts";

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

/** The default `onDrop`: one warning per report, to the client's logger. */
export function warnDrop(logger: Logger, { reason, count, error }: AuditDrop): void {
  const cause = error instanceof Error ? `: ${error.message.replace(/\.$/, "")}` : "";
  logger.warn(
    `platform-integration: dropped ${count} audit event${count === 1 ? "" : "s"} (${reason})${cause}. Pass onDrop to createAuditClient to handle drops.`,
  );
}

/**
 * The default `onError`: the configuration error that stops delivery is logged as an error, once
 * (the client reports it once); a failed attempt that will be retried only at debug level.
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
