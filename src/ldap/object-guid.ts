/**
 * Renders Active Directory's binary `objectGUID` (16 bytes) as the canonical GUID string, the one
 * PowerShell, ADUC and Azure AD show (`3ab39606-c642-489b-84b6-58c038d3ef39`), lower-case and
 * without braces. AD stores a GUID as Windows lays the structure out in memory: its first three
 * groups (a 32-bit and two 16-bit integers) are little-endian, so their bytes are reversed; the
 * last two groups are plain bytes. Reading the 16 bytes as hex in order, as a generic UUID
 * parser does, yields a different identifier for the same user.
 *
 * @throws TypeError when the value is not 16 bytes long.
 * @example
 * ```ts
 * objectGuidToString(Buffer.from("BpazOkLGm0iEtljAONPvOQ==", "base64"));
 * // "3ab39606-c642-489b-84b6-58c038d3ef39"
 * ```
 */
export function objectGuidToString(bytes: Uint8Array): string {
  if (bytes.length !== 16) {
    throw new TypeError(`An objectGUID has 16 bytes, not ${bytes.length}`);
  }
  const hex = (indexes: number[]) =>
    indexes.map((index) => (bytes[index] as number).toString(16).padStart(2, "0")).join("");
  return [
    hex([3, 2, 1, 0]),
    hex([5, 4]),
    hex([7, 6]),
    hex([8, 9]),
    hex([10, 11, 12, 13, 14, 15]),
  ].join("-");
}
