// The ./audit-pg-boss entry: the Audit client over a pg-boss queue on the application's database.
export type { AuditEvent } from "../audit/audit-event.ts";
export * from "../integration-api/public.ts";
export {
  type AuditDeadLetter,
  createPgBossAudit,
  type PgBossAudit,
  type PgBossAuditOptions,
  type PgBossRecordOptions,
  type PgBossWorkOptions,
} from "./pg-boss-audit.ts";
