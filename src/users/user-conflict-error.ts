import type { UserFieldName } from "./user-record.ts";

/**
 * What a {@link UserStore} throws when it refuses a record for good: a unique value held by
 * another user (a username, an email), a foreign key, a check. Retrying the same record cannot
 * succeed until something else changes, so the handler treats it apart from a store that is down:
 * without the `quarantine` option it answers 503 like any store failure (and says once that the
 * option would keep the directory flowing); with it, the message is kept in the store's
 * quarantine and answered with success. The bundled stores throw it for their `unique` fields.
 *
 * Its message is logged and listed by `handler.quarantined()`: it must never contain a password.
 *
 * @example
 * ```ts
 * catch (error) {
 *   if (isUniqueViolation(error)) throw new UserConflictError("email is already held by another user", { field: "email", cause: error });
 *   throw error;
 * }
 * ```
 */
export class UserConflictError extends Error {
  override readonly name = "UserConflictError";
  /** The field whose value conflicts (camelCase), when the store knows it. */
  readonly field: UserFieldName | undefined;

  constructor(
    message: string,
    options: { field?: UserFieldName | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = options.field;
  }
}

/** Whether `error` is a {@link UserConflictError}, also one from another copy of the SDK. */
export function isUserConflict(error: unknown): error is UserConflictError {
  return (
    error instanceof UserConflictError ||
    (error instanceof Error && error.name === "UserConflictError")
  );
}
