import type { LicenseValue } from "./license-record.ts";

// The field types whose JSON value has one type, by lower-case name: the vendor spells them
// "Integer", a hand-written or broken answer may not, and the check must not depend on it. A Map,
// not an object: "__proto__" or "toString" must read as unknown on every runtime. Others the
// platform may add (File, Password...) are not checked: the SDK cannot know their encoding.
const expected = new Map<string, "boolean" | "integer" | "string">([
  ["boolean", "boolean"],
  ["integer", "integer"],
  ["string", "string"],
  ["text", "string"],
  ["enum", "string"],
]);

/**
 * Why a license field's JSON value does not have the type its `valueType` declares, or
 * undefined when it does, or when the type is absent or one the SDK does not know (`Float`,
 * `File`...: passed through unchecked, so check the JSON type yourself). Known types are matched
 * whatever their case (`boolean` is `Boolean`). A signature covers the
 * value's text only, so a Boolean `false` served as the string `"false"` still verifies: this
 * is the check that refuses it. A field without a value (null) fits every type, and an Integer
 * may hold `""`, which the service sends for one left empty.
 */
export function valueTypeProblem(value: LicenseValue | undefined, valueType: string | undefined) {
  if (value === undefined || value === null || typeof valueType !== "string") return undefined;
  const wanted = expected.get(valueType.toLowerCase());
  if (wanted === undefined) return undefined;
  const fits =
    wanted === "integer"
      ? (typeof value === "number" && Number.isInteger(value)) || value === ""
      : typeof value === wanted;
  if (fits) return undefined;
  return `its value ${JSON.stringify(value)} is ${typeof value === "number" ? "a number" : `a ${typeof value}`}, but its valueType ${valueType} needs ${wanted === "integer" ? "an integer" : `a ${wanted}`}`;
}
