export {
  ConfigurationError,
  HttpError,
  isConfigurationError,
  isHttpError,
  isNetworkError,
  isPlatformApiError,
  isResponseShapeError,
  isTimeoutError,
  NetworkError,
  PlatformApiError,
  type RequestDetails,
  ResponseShapeError,
  TimeoutError,
} from "../integration-api/errors.ts";
export type {
  CallOptions,
  IntegrationApiOptions,
  RetryOptions,
  TlsOptions,
} from "../integration-api/options.ts";
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
  clientIp,
  type NodeRequestLike,
  type TrustProxy,
} from "./client-ip.ts";
