// What both ./version and ./audit export of the shared layer: the error family and the options.
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
