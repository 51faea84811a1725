// The hint a handler without the quarantine logs when the store refuses a user for good: the
// platform will redeliver the message for ever, and the quarantine option would keep it flowing.
import type { Logger } from "../internal/logger.ts";
import type { UserConflictError } from "../users/user-conflict-error.ts";

/**
 * Without the quarantine, a conflict answers 503 like any store failure, and the platform sends
 * the message again for ever; this says once per user and field that the option would keep the
 * directory flowing. It remembers a bounded number of them.
 */
export function createConflictHint(
  logger: Logger,
): (uuid: string, conflict: UserConflictError, log?: Logger) => void {
  const told = new Set<string>();
  return (uuid, conflict, log = logger) => {
    const key = `${uuid}\u0000${conflict.field ?? ""}`;
    if (told.has(key)) return;
    if (told.size >= 10_000) told.clear();
    told.add(key);
    const field = conflict.field === undefined ? "a value" : `its ${conflict.field}`;
    log.warn(
      `platform-integration: the store refused user ${JSON.stringify(uuid)} for good (${field} conflicts with another user): the platform will send this message again and the directory stays paused behind it until the conflict is resolved. The handler's quarantine option would keep the message, answer success and apply it once the conflict is gone, so that the directory keeps flowing.`,
      { uuid, ...(conflict.field === undefined ? {} : { field: conflict.field }) },
    );
  };
}
