export * from "../integration-api/public.ts";
export { type AuditActionOf, defineAuditActions } from "./actions.ts";
export {
  type AuditClient,
  type AuditClientOptions,
  type AuditDrop,
  type AuditDropReason,
  type AuditStats,
  createAuditClient,
  type FlushOptions,
} from "./audit-client.ts";
export type { AuditEvent } from "./audit-event.ts";
export {
  type ClientIpOptions,
  type ClientIpReader,
  clientIp,
  createClientIp,
  type NodeRequestLike,
  type TrustProxy,
} from "./client-ip.ts";
