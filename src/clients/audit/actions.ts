// The catalogue of audit actions: defineAuditActions checks the names once, and the type of a
// catalogue's actions lets record() accept those alone.
/** The action names of a catalogue made with {@link defineAuditActions}, as a union of literals. */
export type AuditActionOf<Catalogue extends Readonly<Record<string, string>>> =
  Catalogue[keyof Catalogue];

const maxActionLength = 128;
const unreadable = /[\s\p{C}]/u;

/**
 * Declares the application's audit actions in one place (a best practice of the platform): keys
 * for the code, short dotted values for the audit log. The values keep their literal types, so a
 * client created with `actions` accepts only these. Each value must be non-empty, at most 128
 * characters, without spaces or control characters, and unique.
 *
 * @example
 * ```ts
 * export const auditActions = defineAuditActions({
 *   userLogin: "user.login.success",
 *   userLoginFailed: "user.login.failure",
 *   reportExport: "report.export",
 * });
 * const audit = createAuditClient({ actions: auditActions });
 * audit.record({ action: auditActions.userLogin, name: "user.login", ipAddress });
 * ```
 *
 * @throws TypeError naming the first value that breaks a rule.
 */
export function defineAuditActions<const Catalogue extends Readonly<Record<string, string>>>(
  catalogue: Catalogue,
): Readonly<Catalogue> {
  const seen = new Map<string, string>();
  for (const [key, action] of Object.entries(catalogue)) {
    if (
      typeof action !== "string" ||
      action === "" ||
      action.length > maxActionLength ||
      unreadable.test(action)
    ) {
      throw new TypeError(
        `Audit action ${key} must be a short readable name (1-${maxActionLength} characters, no spaces), got ${JSON.stringify(action)}.`,
      );
    }
    const other = seen.get(action);
    if (other !== undefined) {
      throw new TypeError(
        `Audit actions ${other} and ${key} are both ${JSON.stringify(action)}: each action needs its own name.`,
      );
    }
    seen.set(action, key);
  }
  return Object.freeze({ ...catalogue });
}
