import { pathSegment } from "../../internal/url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { isHttpError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import {
  type License,
  type LicenseFieldValue,
  readFieldValue,
  readLicense,
} from "./license-records.ts";

/** Options of {@link createLicenseClient}. */
export type LicenseClientOptions = IntegrationApiOptions;

/** The License API: the customer's license and its custom fields. */
export interface LicenseClient {
  /** The whole license: ids, dates (lossless `Timestamp`s) and every field, with the raw body. */
  license(options?: CallOptions): Promise<License>;
  /**
   * One field by name, or undefined when the platform answers 404 (its answer for an unknown
   * field is not documented; the SDK's fake answers 404).
   */
  field(name: string, options?: CallOptions): Promise<LicenseFieldValue | undefined>;
}

/**
 * Creates a client of the platform's License API, with the TLS, time-out, retry and error
 * behaviour of the other clients.
 *
 * @example
 * ```ts
 * import { createLicenseClient } from "platform-integration/license";
 *
 * const license = createLicenseClient({ tls: { ca: process.env.PLATFORM_CA } });
 * const { expirationTime, fields } = await license.license();
 * const maxUsers = Number((await license.field("max_users"))?.value ?? 0);
 * ```
 */
export function createLicenseClient(options?: LicenseClientOptions): LicenseClient {
  const api = createIntegrationApi(options);
  return {
    async license(call = {}) {
      return readLicense(await api.request("GET", "/license/v1/license", { ...call, retry: true }));
    },

    async field(name, call = {}) {
      const path = `/license/v1/field/${pathSegment("name", name)}`;
      try {
        return readFieldValue(await api.request("GET", path, { ...call, retry: true }));
      } catch (error) {
        if (isHttpError(error) && error.status === 404) return undefined;
        throw error;
      }
    },
  };
}
