// What every client entry (./version, ./audit, ./audit-pg-boss, ./identity, ./license, ./console,
// ./app) exports of the shared layer: the error family and the options.

export type { LogFields, Logger } from "../../internal/logger.ts";
export type {
  CallOptions,
  IntegrationApiOptions,
  RetryOptions,
  TlsOptions,
} from "./client-options.ts";
export {
  CallTimeoutError,
  ConfigurationError,
  HttpError,
  isCallTimeoutError,
  isConfigurationError,
  isHttpError,
  isNetworkError,
  isPlatformApiError,
  isReadOnlyModeError,
  isResponseShapeError,
  isUnsupportedOperationError,
  NetworkError,
  PlatformApiError,
  type PlatformApiKind,
  ReadOnlyModeError,
  type RequestDetails,
  ResponseShapeError,
  UnsupportedOperationError,
} from "./errors.ts";
