import type { LicenseValue } from "./license-records.ts";

// The field types whose JSON value has one type. Others the platform may add (File, Password...)
// are not checked: the SDK cannot know their encoding.
const expected: Record<string, "boolean" | "integer" | "string"> = {
  Boolean: "boolean",
  Integer: "integer",
  String: "string",
  Text: "string",
  Enum: "string",
};

/**
 * Why a license field's JSON value does not have the type its `valueType` declares, or
 * undefined when it does (or the type is one the SDK does not know). A signature covers the
 * value's text only, so a Boolean `false` served as the string `"false"` still verifies: this
 * is the check that refuses it. A field without a value (null) fits every type, and an Integer
 * may hold `""`, which the service sends for one left empty.
 */
export function valueTypeProblem(value: LicenseValue | undefined, valueType: string | undefined) {
  if (value === undefined || value === null || valueType === undefined) return undefined;
  const wanted = expected[valueType];
  if (wanted === undefined) return undefined;
  const fits =
    wanted === "integer"
      ? (typeof value === "number" && Number.isInteger(value)) || value === ""
      : typeof value === wanted;
  if (fits) return undefined;
  return `its value ${JSON.stringify(value)} is ${typeof value === "number" ? "a number" : `a ${typeof value}`}, but its valueType ${valueType} needs ${wanted === "integer" ? "an integer" : `a ${wanted}`}`;
}
