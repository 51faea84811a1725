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
export { Timestamp } from "./timestamp.ts";
export {
  type ApplyResult,
  createVersionClient,
  type VersionClient,
  type VersionClientOptions,
  type WatchUpdatesOptions,
} from "./version-client.ts";
export type { CurrentVersion, VersionUpdate } from "./version-records.ts";
