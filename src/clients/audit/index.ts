// The ./audit entry: the Audit client, its actions catalogue, the client address reader and the
// spool's public names.
export * from "../integration-api/public.ts";
export { type AuditActionOf, defineAuditActions } from "./actions.ts";
export { createAuditClient } from "./audit-client.ts";
export type { AuditEvent } from "./audit-event.ts";
export type {
  AuditClient,
  AuditClientOptions,
  AuditDrop,
  AuditDropReason,
  AuditStats,
  FlushOptions,
} from "./audit-types.ts";
export {
  type ClientIpOptions,
  type ClientIpReader,
  clientIp,
  createClientIp,
  type NodeRequestLike,
  type TrustProxy,
} from "./client-ip.ts";
export { SpoolLockedError } from "./spool/spool-lock.ts";
export type { AuditSpoolOptions } from "./spool/spool-options.ts";
