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

/**
 * Renders a binary security identifier (Active Directory's `objectSid`) in its standard string
 * form, `S-1-5-21-3623811015-3361044348-30300820-1013`: the revision, the 48-bit identifier
 * authority (big-endian), then each 32-bit sub-authority (little-endian). Undefined when the
 * bytes are not a SID (too short, or a length that disagrees with the sub-authority count).
 *
 * @example
 * ```ts
 * objectSidToString(Buffer.from("AQUAAAAAAAUVAAAAx8T/15Tu4MjUCM8B9QMAAA==", "base64"));
 * // "S-1-5-21-3623863495-3370184340-30345428-1013"
 * ```
 */
export function objectSidToString(bytes: Uint8Array): string | undefined {
  const count = bytes[1];
  if (bytes.length < 8 || count === undefined || bytes.length !== 8 + 4 * count) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const authority = view.getUint16(2) * 2 ** 32 + view.getUint32(4);
  const parts = [`S-${bytes[0]}`, String(authority)];
  for (let index = 0; index < count; index++)
    parts.push(String(view.getUint32(8 + 4 * index, true)));
  return parts.join("-");
}
