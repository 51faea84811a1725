import { type AuditActionOf, defineAuditActions } from "platform-integration/audit";

/**
 * Every action this app writes to the platform's audit log, in one place: the keys are for the
 * code, the short dotted values are what administrators search for in the platform console.
 */
export const auditActions = defineAuditActions({
  signIn: "user.signin.success",
  signInFailed: "user.signin.failure",
  reportExport: "report.export",
});

export type AuditAction = AuditActionOf<typeof auditActions>;
