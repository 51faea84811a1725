import { decodeSegment } from "../integration-api/fake-answers.ts";
import { Timestamp } from "../integration-api/timestamp.ts";
import {
  encoded,
  goJson,
  type LicenseFacts,
  type SdkFakeContext,
  type SdkFakeRoute,
  staleHeaders,
} from "../sdk-api/fake-answers.ts";
import { type FakeLicenseField, fakeFieldType } from "./fake.ts";
import {
  kotsLicenseSchema,
  type SdkLicenseField,
  type SdkLicenseFlags,
  sdkLicenseFieldSchema,
  sdkLicenseFieldsSchema,
  sdkLicenseFlagNames,
  sdkLicenseInfoSchema,
} from "./sdk-license-schemas.ts";

// The license's part of the newer API's fake: its routes (license info, fields, one field, and
// the admin console's compatibility license, served from the same license), each record encoded
// by the schema the client decodes it with (sdk-license-schemas.ts).

/** A license field of the fake's newer API, served with its signatures as given. */
export interface FakeSdkLicenseField {
  name: string;
  title?: string;
  description?: string;
  /** Left out of the answer when absent (the field then signs as `<nil>`). */
  value?: string | number | boolean;
  valueType?: string;
  isHidden?: boolean;
  signature?: { v1?: string; v2?: string };
}

/** The license the fake's newer API (and its admin console endpoint) serves. */
export interface FakeSdkLicense {
  licenseId: string;
  customerName: string;
  customerId?: string;
  customerEmail?: string;
  channelName?: string;
  licenseType?: string;
  appSlug?: string;
  licenseSequence?: number;
  /** `channelID` (default "fake-channel-id"). */
  channelId?: string;
  /** The vendor's address (default `https://replicated.app`). */
  endpoint?: string;
  /**
   * The feature flags; those not given are false, except `isAirgapSupported` and
   * `isSupportBundleUploadSupported` (true unless given).
   */
  flags?: Partial<SdkLicenseFlags>;
  /** The fields, `expires_at` included when the license expires. */
  fields: FakeSdkLicenseField[];
}

/** The license a fake starts with: a dev license, one Integer field `seat_count` of 10, unsigned. */
export const fakeSdkLicenseDefault: FakeSdkLicense = {
  licenseId: "fake-license-id",
  customerName: "Example Corp",
  customerId: "fake-customer-id",
  customerEmail: "admin@example.com",
  channelName: "Stable",
  licenseType: "dev",
  appSlug: "fake-app",
  fields: [{ name: "seat_count", title: "Seat count", value: 10, valueType: "Integer" }],
};

/**
 * {@link fakeSdkLicenseDefault} with these fields, given as the Integration API's fake takes
 * them (`mock-api --license-field`): typed as that fake types them, unsigned.
 */
export function fakeSdkLicenseWith(fields: readonly FakeLicenseField[]): FakeSdkLicense {
  return {
    ...fakeSdkLicenseDefault,
    fields: fields.map(({ field, value }) => ({
      name: field,
      ...(value === null ? {} : { value }),
      valueType: fakeFieldType(value),
    })),
  };
}

const defaultFlags: SdkLicenseFlags = {
  isAirgapSupported: true,
  isGitOpsSupported: false,
  isIdentityServiceSupported: false,
  isGeoaxisSupported: false,
  isSnapshotSupported: false,
  isSupportBundleUploadSupported: true,
  isSemverRequired: false,
};

/** The license's part of the newer API's fake: its routes and state. */
export function createFakeSdkLicense(
  context: SdkFakeContext,
  initialLicense: FakeSdkLicense | undefined,
): {
  routes: SdkFakeRoute[];
  readonly current: FakeSdkLicense;
  /** What the app's answers read from the license. */
  facts(): LicenseFacts;
  /** Sets the license's type (the fake's control route): integration mode needs "dev". */
  setType(licenseType: string): void;
  set(license: FakeSdkLicense): void;
  reset(): void;
} {
  const initial = () => structuredClone(initialLicense ?? fakeSdkLicenseDefault);
  let license = initial();
  // /license/fields names each field; the info's entitlements do not (the service's own types).
  const fields = (named = true): Record<string, SdkLicenseField> =>
    Object.fromEntries(license.fields.map((field) => [field.name, toWireField(field, named)]));

  const routes: SdkFakeRoute[] = [
    {
      method: "GET",
      path: "/api/v1/license/info",
      answer: () =>
        encoded(
          sdkLicenseInfoSchema,
          {
            licenseID: license.licenseId,
            appSlug: license.appSlug ?? "fake-app",
            channelID: license.channelId ?? "fake-channel-id",
            channelName: license.channelName ?? "Stable",
            customerID: license.customerId ?? "",
            customerName: license.customerName,
            customerEmail: license.customerEmail ?? "",
            licenseType: license.licenseType ?? "dev",
            endpoint: license.endpoint ?? "https://replicated.app",
            licenseSequence: license.licenseSequence ?? 1,
            ...(Object.fromEntries(
              sdkLicenseFlagNames.map((name) => [
                name,
                license.flags?.[name] ?? defaultFlags[name],
              ]),
            ) as Record<keyof SdkLicenseFlags, boolean>),
            entitlements: fields(false),
          },
          staleHeaders(context),
        ),
    },
    {
      method: "GET",
      path: "/api/v1/license/fields",
      answer: () => encoded(sdkLicenseFieldsSchema, fields(), staleHeaders(context)),
    },
    {
      method: "GET",
      path: "/api/v1/license/fields/:name",
      answer: (_request, segment) => {
        const name = decodeSegment(segment);
        const found = license.fields.find((field) => field.name === name);
        if (found === undefined) return goJson(404, `license field "${name}" not found`);
        return encoded(sdkLicenseFieldSchema, toWireField(found, true), staleHeaders(context));
      },
    },
    { method: "GET", path: "/license/v1/license", answer: () => kotsAnswer(license) },
  ];

  return {
    routes,
    get current() {
      return structuredClone(license);
    },
    set(next) {
      license = structuredClone(next);
    },
    facts: () => ({
      // The service's own default is a development license.
      development: (license.licenseType ?? "dev") === "dev",
      appSlug: license.appSlug,
      channelName: license.channelName,
    }),
    setType(licenseType) {
      license = { ...license, licenseType };
    },
    reset() {
      license = initial();
    },
  };
}

/** The admin console's compatibility license: unsigned fields, `expires_at` read as a date. */
function kotsAnswer(license: FakeSdkLicense): Response {
  const expires = license.fields.find((field) => field.name === "expires_at")?.value;
  return encoded(kotsLicenseSchema, {
    license_id: license.licenseId,
    installation_id: "fake-kots-app-id",
    assignee: license.customerName,
    release_channel: license.channelName ?? "Stable",
    license_type: license.licenseType ?? "dev",
    ...(typeof expires === "string" && expires !== ""
      ? { expiration_time: Timestamp.parse(expires) }
      : {}),
    fields: license.fields
      .filter((field) => field.name !== "expires_at")
      .map((field) => ({
        field: field.name,
        title: field.title ?? field.name,
        type: field.valueType ?? "String",
        value: field.value ?? null,
        ...(field.isHidden === true ? { hide_from_customer: true } : {}),
      })),
  });
}

/** A field as Go writes it: empty strings and `false` left out, `signature` always there. */
function toWireField(field: FakeSdkLicenseField, named: boolean): SdkLicenseField {
  return {
    ...(named ? { name: field.name } : {}),
    ...(field.title ? { title: field.title } : {}),
    ...(field.description ? { description: field.description } : {}),
    ...(field.value === undefined ? {} : { value: field.value }),
    ...(field.valueType ? { valueType: field.valueType } : {}),
    ...(field.isHidden === true ? { isHidden: true } : {}),
    signature: { ...field.signature },
  };
}
