// What both ./version and ./audit export of the shared layer: the error family and the options.

export type { LogFields, Logger } from "../../internal/logger.ts";
export type {
  CallOptions,
  IntegrationApiOptions,
  RetryOptions,
  TlsOptions,
} from "./client-options.ts";
export {
  ConfigurationError,
  HttpError,
  isConfigurationError,
  isHttpError,
  isNetworkError,
  isPlatformApiError,
  isReadOnlyModeError,
  isResponseShapeError,
  isTimeoutError,
  isUnsupportedOperationError,
  NetworkError,
  PlatformApiError,
  type PlatformApiKind,
  ReadOnlyModeError,
  type RequestDetails,
  ResponseShapeError,
  TimeoutError,
  UnsupportedOperationError,
} from "./errors.ts";
