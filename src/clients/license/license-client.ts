import { pathSegment } from "../../internal/url.ts";
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import { isHttpError, type PlatformApiKind } from "../integration-api/errors.ts";
import { readJsonObject } from "../integration-api/json-body.ts";
import { type ApiMembers, openApiSelection, withApiMembers } from "../sdk-api/api-client.ts";
import { type ApiOption, type Capabilities, requireCapability } from "../sdk-api/api-selection.ts";
import { sdkRequest } from "../sdk-api/sdk-answers.ts";
import type { License, LicenseFieldValue } from "./license-record.ts";
import {
  type KotsLicense,
  readFieldValue,
  readLicense,
  type SdkLicense,
  type SdkLicenseFieldValue,
} from "./read-license.ts";
import { readKotsLicense, readSdkLicense, readSdkLicenseField } from "./sdk-api-license.ts";

/** Options of {@link createLicenseClient}. */
export interface LicenseClientOptions extends IntegrationApiOptions {
  /**
   * Which API to read the license from (default `"auto"`): the Integration API, the newer
   * in-cluster SDK service (signed fields), or the admin console's compatibility endpoint
   * (`"kots"`, `http://kotsadm:3000` unless `baseUrl` says otherwise).
   */
  api?: ApiOption | undefined;
}

/** The license's record on each API. */
export type LicenseOf<Api extends PlatformApiKind> = Api extends "integration"
  ? License
  : Api extends "sdk"
    ? SdkLicense
    : KotsLicense;

/** One field's record on each API; only the newer API's carries signatures. */
export type LicenseFieldValueOf<Api extends PlatformApiKind> = Api extends "sdk"
  ? SdkLicenseFieldValue
  : LicenseFieldValue;

/** The License API on one of the platform's APIs; see {@link LicenseClient}. */
export interface LicenseClientOf<Api extends PlatformApiKind> {
  /**
   * The API this client talks to, decided at its first use (or by the `api` option). With
   * "auto" and a `baseUrl`, what answers there decides, at the first call: reading `api`
   * before then throws; `await detectApi()` decides it.
   */
  readonly api: Api;
  /** What that API can serve: `signedLicenseFields` only on `"sdk"`. Read as `api` is. */
  readonly capabilities: Readonly<Capabilities>;
  /**
   * Decides the API now (with "auto" and a `baseUrl`, by asking `GET /healthz` there once) and
   * resolves with it.
   */
  detectApi(options?: CallOptions): Promise<Api>;
  /**
   * The newer service's version, from its `GET /healthz` (`"1.19.1"`), to gate features an older
   * service lacks; undefined on the other APIs, which name none.
   */
  serviceVersion(options?: CallOptions): Promise<string | undefined>;
  /** The whole license: ids, dates (lossless `Timestamp`s) and every field, with the raw body. */
  license(options?: CallOptions): Promise<LicenseOf<Api>>;
  /**
   * One field by name, or undefined when there is none (a 404). On `"kots"`, which has no field
   * route, it is read from the whole license.
   */
  field(name: string, options?: CallOptions): Promise<LicenseFieldValueOf<Api> | undefined>;
}

/**
 * The License API: the customer's license and its custom fields. Without a type argument, the
 * union of the clients of each API, told apart by `api`.
 */
export type LicenseClient<Api extends PlatformApiKind = PlatformApiKind> =
  Api extends PlatformApiKind ? LicenseClientOf<Api> : never;

/**
 * Creates a client of the platform's License API, with the TLS, time-out, retry and error
 * behaviour of the other clients, on the API the `api` option selects.
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
export function createLicenseClient<Api extends PlatformApiKind>(
  options: LicenseClientOptions & { api: Api },
): LicenseClient<Api>;
export function createLicenseClient(options?: LicenseClientOptions): LicenseClient;
export function createLicenseClient(options: LicenseClientOptions = {}): LicenseClient {
  const selection = openApiSelection(options);

  async function license(call: CallOptions = {}) {
    const { kind, api } = await selection.select(call);
    const get = (path: string, operation: string, feature: string) =>
      sdkRequest(api, kind, "GET", path, { operation, feature }, { ...call, retry: true });
    requireCapability(kind, "license", "license.license");
    if (kind === "integration") {
      return readLicense(await api.request("GET", "/license/v1/license", { ...call, retry: true }));
    }
    if (kind === "kots") {
      return readKotsLicense(
        await api.request("GET", "/license/v1/license", { ...call, retry: true }),
      );
    }
    const info = await get("/api/v1/license/info", "license.license", "the license info");
    // The info's `entitlements` are the fields; an older service leaves them out.
    const withFields = Object.hasOwn(readJsonObject(info), "entitlements")
      ? undefined
      : await get("/api/v1/license/fields", "license.license", "the license fields");
    return readSdkLicense(info, withFields);
  }

  const client = withApiMembers(selection, "license", {
    license,

    async field(name, call = {}) {
      const { kind, api } = await selection.select(call);
      requireCapability(kind, "licenseField", "license.field");
      const segment = pathSegment("name", name);
      if (kind === "kots") {
        const { fields, raw } = (await license(call)) as KotsLicense;
        const index = fields.findIndex((candidate) => candidate.field === name);
        const found = fields[index];
        if (found === undefined) return undefined;
        const wire = (raw.fields as KotsLicense["raw"][])[index] ?? {};
        return { field: found.field, value: found.value, raw: wire };
      }
      try {
        if (kind === "integration") {
          const path = `/license/v1/field/${segment}`;
          return readFieldValue(await api.request("GET", path, { ...call, retry: true }));
        }
        // The service answers an unknown field with 404 and a JSON string; sdkRequest would
        // read a 404 as an older service, so this call goes to the layer directly.
        const path = `/api/v1/license/fields/${segment}`;
        return readSdkLicenseField(await api.request("GET", path, { ...call, retry: true }), name);
      } catch (error) {
        if (isHttpError(error) && error.status === 404) return undefined;
        throw error;
      }
    },
  } satisfies Omit<LicenseClientOf<PlatformApiKind>, keyof ApiMembers>);
  return client as LicenseClient;
}
