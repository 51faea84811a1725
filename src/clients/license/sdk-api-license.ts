import type { JsonObject } from "type-fest";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { readJsonObject } from "../integration-api/json-body.ts";
import { Timestamp } from "../integration-api/timestamp.ts";
import { decodeBody, readFlags } from "../sdk-api/sdk-answers.ts";
import type {
  KotsLicense,
  LicenseField,
  SdkLicense,
  SdkLicenseFieldValue,
} from "./read-license.ts";
import {
  kotsLicenseSchema,
  type SdkLicenseField,
  type SdkLicenseFlags,
  sdkLicenseFieldSchema,
  sdkLicenseFieldsSchema,
  sdkLicenseFlagNames,
  sdkLicenseInfoSchema,
} from "./sdk-license-schemas.ts";
import { valueTypeProblem } from "./value-type.ts";

/** The entries of GET /api/v1/license/fields (or of the info's `entitlements`) as fields. */
function toFields(fields: Record<string, SdkLicenseField>, response: ApiResponse): LicenseField[] {
  return Object.entries(fields).map(([key, field]) => {
    const name = field.name ?? key;
    checkValueType(field, name, response);
    return {
      field: name,
      title: field.title ?? name,
      type: field.valueType ?? "",
      value: field.value ?? null,
      hideFromCustomer: field.isHidden ?? false,
      ...(field.description === undefined ? {} : { description: field.description }),
      signature: { ...field.signature },
    };
  });
}

/**
 * The license info and its fields (the info's `entitlements`, else a second answer of
 * GET /api/v1/license/fields) as an {@link SdkLicense}.
 */
export function readSdkLicense(info: ApiResponse, fieldsAnswer?: ApiResponse): SdkLicense {
  const decoded = decodeBody(info, sdkLicenseInfoSchema);
  const entitlements =
    fieldsAnswer === undefined
      ? (decoded.entitlements ?? {})
      : decodeBody(fieldsAnswer, sdkLicenseFieldsSchema);
  const fields = toFields(entitlements, fieldsAnswer ?? info);
  const expires = fields.find((field) => field.field === "expires_at")?.value;
  let expirationTime: Timestamp | undefined;
  if (typeof expires === "string" && expires !== "") {
    try {
      expirationTime = Timestamp.parse(expires);
    } catch {
      throw new ResponseShapeError(info, "the field expires_at is not an RFC 3339 date-time");
    }
  }
  return {
    licenseId: decoded.licenseID,
    assignee: decoded.customerName,
    releaseChannel: decoded.channelName,
    channelId: decoded.channelID,
    endpoint: decoded.endpoint,
    ...(Object.fromEntries(sdkLicenseFlagNames.map((name) => [name, decoded[name]])) as Record<
      keyof SdkLicenseFlags,
      boolean
    >),
    licenseType: decoded.licenseType,
    customerId: decoded.customerID,
    customerEmail: decoded.customerEmail,
    appSlug: decoded.appSlug,
    licenseSequence: decoded.licenseSequence,
    fields,
    ...(expirationTime === undefined ? {} : { expirationTime }),
    fromCache:
      readFlags(info.headers).fromCache ||
      (fieldsAnswer !== undefined && readFlags(fieldsAnswer.headers).fromCache),
    raw: readJsonObject(info),
  };
}

/** GET /api/v1/license/fields/{name}. */
export function readSdkLicenseField(response: ApiResponse, name: string): SdkLicenseFieldValue {
  const decoded = decodeBody(response, sdkLicenseFieldSchema);
  checkValueType(decoded, decoded.name ?? name, response);
  return {
    field: decoded.name ?? name,
    value: decoded.value ?? null,
    ...(decoded.title === undefined ? {} : { title: decoded.title }),
    ...(decoded.valueType === undefined ? {} : { type: decoded.valueType }),
    ...(decoded.description === undefined ? {} : { description: decoded.description }),
    ...(decoded.isHidden === undefined ? {} : { hideFromCustomer: decoded.isHidden }),
    signature: { ...decoded.signature },
    fromCache: readFlags(response.headers).fromCache,
    raw: readJsonObject(response),
  };
}

/**
 * Refuses a field whose JSON value is not of its declared type (a Boolean `false` served as the
 * string `"false"`, which `if (field.value)` would read as true): its signature covers the text
 * only, so it would verify.
 */
function checkValueType(field: SdkLicenseField, name: string, response: ApiResponse): void {
  const problem = valueTypeProblem(field.value, field.valueType);
  if (problem !== undefined) {
    throw new ResponseShapeError(response, `the license field ${JSON.stringify(name)}: ${problem}`);
  }
}

/** GET {kotsadm}/license/v1/license: the admin console's compatibility license. */
export function readKotsLicense(response: ApiResponse): KotsLicense {
  const decoded = decodeBody(response, kotsLicenseSchema);
  return {
    licenseId: decoded.license_id,
    installationId: decoded.installation_id,
    ...(decoded.assignee === undefined ? {} : { assignee: decoded.assignee }),
    ...(decoded.release_channel === undefined ? {} : { releaseChannel: decoded.release_channel }),
    ...(decoded.license_type === undefined ? {} : { licenseType: decoded.license_type }),
    fields: decoded.fields.map((field) => ({
      field: field.field,
      title: field.title ?? field.field,
      type: field.type ?? "",
      value: field.value,
      hideFromCustomer: field.hide_from_customer ?? false,
    })),
    ...(decoded.expiration_time === undefined ? {} : { expirationTime: decoded.expiration_time }),
    raw: readJsonObject(response) as JsonObject,
  };
}
