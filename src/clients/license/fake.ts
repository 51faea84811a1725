// The License API's fake: its routes and state, each answer encoded by the record the client
// decodes it with (license-record.ts). The newer API's license is fake-sdk-api.ts.

import { decodeSegment, type FakeRoute, json, jsonError } from "../integration-api/fake-answers.ts";
import type { WireValuesOf } from "../integration-api/wire-record.ts";
import { licenseFieldRecord, licenseFieldValueRecord, licenseRecord } from "./license-record.ts";

/** A license field as the fake serves it in `fields[]`. */
export interface FakeLicenseField {
  field: string;
  /** Default: the field's name. */
  title?: string;
  /** Default: "Integer" for an integer value, "Boolean" for a boolean, else "String". */
  type?: string;
  value: string | number | boolean | null;
  /** Default false. */
  hideFromCustomer?: boolean;
}

/**
 * The license the fake's License API serves: the client's `License` (one schema,
 * `licenseRecord`, gives both and the wire names) with its dates as text, served verbatim.
 */
export interface FakeLicense
  extends Omit<WireValuesOf<typeof licenseRecord.shape>, "fields" | "expirationTime"> {
  fields: FakeLicenseField[];
  /** RFC 3339; left out of the answer when absent, as the platform does for unset dates. */
  expirationTime?: string;
}

/** The fake License API's state, as `api.license` of a fake Integration API. */
export interface FakeLicenseApi {
  /** A copy of the license served. */
  readonly current: FakeLicense;
  /** Replaces the license served. */
  set(license: FakeLicense): void;
}

/** The license a fake starts with: no expiry, one Integer field `max_users` of 100. */
export const fakeLicenseDefault: FakeLicense = {
  licenseId: "fake-license-id",
  installationId: "fake-installation-id",
  assignee: "Example Corp",
  releaseChannel: "Stable",
  fields: [{ field: "max_users", title: "Maximum users", type: "Integer", value: 100 }],
};

/**
 * The License API: `GET /license/v1/license` and `GET /license/v1/field/:name`. As on the
 * platform, a field's numeric value is a JSON number in the license's `fields` but a string from
 * the field endpoint. An unknown field answers 404 (the platform's answer is undocumented).
 */
export function createFakeLicense(initialLicense: FakeLicense | undefined): {
  api: FakeLicenseApi;
  routes: FakeRoute[];
  reset(): void;
} {
  const initial = structuredClone(initialLicense ?? fakeLicenseDefault);
  let license = structuredClone(initial);

  const routes: FakeRoute[] = [
    {
      method: "GET",
      path: "/license/v1/license",
      answer: () => json(200, toWire(license)),
    },
    {
      method: "GET",
      path: "/license/v1/field/:name",
      answer: (_request, segment) => {
        const name = decodeSegment(segment);
        const found = license.fields.find((candidate) => candidate.field === name);
        if (found === undefined) return jsonError(404, "field_not_found", "No such license field.");
        const value = typeof found.value === "number" ? String(found.value) : found.value;
        return json(200, licenseFieldValueRecord.toWire({ field: found.field, value }));
      },
    },
  ];

  return {
    routes,
    api: {
      get current() {
        return structuredClone(license);
      },
      set(next) {
        license = structuredClone(next);
      },
    },
    reset() {
      license = structuredClone(initial);
    },
  };
}

/** The license in the platform's wire form, with the defaults of {@link FakeLicenseField}. */
function toWire(license: FakeLicense) {
  return licenseRecord.toWire({
    ...license,
    fields: license.fields.map((field) =>
      licenseFieldRecord.toWire({
        field: field.field,
        title: field.title ?? field.field,
        type: field.type ?? fakeFieldType(field.value),
        value: field.value,
        hideFromCustomer: field.hideFromCustomer ?? false,
      }),
    ),
  });
}

/** The type a fake gives a field that names none: "Integer", "Boolean" or "String". */
export function fakeFieldType(value: FakeLicenseField["value"]): string {
  if (Number.isInteger(value)) return "Integer";
  return typeof value === "boolean" ? "Boolean" : "String";
}

/**
 * A field from `name=value` text (`mock-api --license-field`): an integer is a number, `true`
 * or `false` a boolean, anything else text; undefined when the text is not `name=value`.
 */
export function fakeLicenseFieldFromText(entry: string): FakeLicenseField | undefined {
  const equals = entry.indexOf("=");
  if (equals < 1) return undefined;
  const text = entry.slice(equals + 1);
  const value = /^-?\d{1,15}$/.test(text)
    ? Number(text)
    : text === "true" || text === "false"
      ? text === "true"
      : text;
  return { field: entry.slice(0, equals), value };
}
