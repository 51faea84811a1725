// The one home of IP address and range rules, for the audit client's `clientIp` (trusted proxies)
// and the Provisioning API's `allowAddresses`. Hand-written rather than ipaddr.js + proxy-addr:
// those add about 4 kB (minified and brotli) to what a Node server imports, against a 5 kB budget
// for the whole handler; the rules below are proxy-addr's (Express's "trust proxy").

/**
 * An IP address as eight 16-bit groups. IPv4 addresses are held IPv4-mapped (::ffff:a.b.c.d), so
 * that one range check covers `10.1.2.3`, `::ffff:10.1.2.3` and the range `10.0.0.0/8`.
 */
export type IpGroups = readonly number[];

/** An address range: the first `prefix` bits of `groups`. */
export interface IpRange {
  groups: IpGroups;
  prefix: number;
}

const ipv4Pattern = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const hexGroup = /^[\da-f]{1,4}$/i;

/** Parses an IPv4 (dotted decimal, no leading zeros) or IPv6 address; a zone (%eth0) is dropped. */
export function parseIp(text: string): IpGroups | undefined {
  return text.includes(":") ? parseIpv6(text) : parseIpv4(text);
}

function parseIpv4(text: string): IpGroups | undefined {
  if (!ipv4Pattern.test(text)) return undefined;
  const [a = 0, b = 0, c = 0, d = 0] = text.split(".").map(Number);
  return [0, 0, 0, 0, 0, 0xffff, (a << 8) | b, (c << 8) | d];
}

function parseIpv6(text: string): IpGroups | undefined {
  const address = text.replace(/%[\w.-]+$/, "");
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  // A dotted IPv4 tail may only end the whole address.
  const parse = (part: string, last: boolean): number[] | undefined => {
    if (part === "") return [];
    const groups: number[] = [];
    const pieces = part.split(":");
    for (const [index, piece] of pieces.entries()) {
      if (last && index === pieces.length - 1 && piece.includes(".")) {
        const ipv4 = parseIpv4(piece);
        if (ipv4 === undefined) return undefined;
        groups.push(ipv4[6] ?? 0, ipv4[7] ?? 0);
      } else if (hexGroup.test(piece)) {
        groups.push(Number.parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return groups;
  };
  const head = parse(halves[0] ?? "", halves.length === 1);
  const tail = halves.length === 2 ? parse(halves[1] ?? "", true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** The canonical text of an address: dotted IPv4 for IPv4 and IPv4-mapped, else RFC 5952 IPv6. */
export function formatIp(groups: IpGroups): string {
  if (isIpv4Mapped(groups)) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  // RFC 5952: compress the longest run of two or more zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length++;
    if (length > bestLength) [bestStart, bestLength] = [start, length];
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/**
 * Parses `address` or `address/prefix`. An IPv4 prefix counts IPv4 bits (0-32) and an IPv6 one
 * 128 bits, so `::/0` covers IPv4 peers too, as in proxy-addr. An IPv4-mapped address written as
 * IPv6 (`::ffff:10.0.0.0/104`) must keep its prefix inside the mapped space (96 or more): a
 * shorter one (`::ffff:10.0.0.0/8`) reads as IPv4 but would cover `::/8`, 8.8.8.8 included.
 * Leading zeros (`010.0.0.0`, octal to some parsers) and IPv4 zones are refused.
 */
export function parseRange(text: string): IpRange | undefined {
  const [address = "", prefixText, ...rest] = text.trim().split("/");
  const groups = parseIp(address);
  if (groups === undefined || rest.length > 0) return undefined;
  const ipv4 = !address.includes(":");
  const bits = ipv4 ? 32 : 128;
  if (prefixText === undefined) return { groups, prefix: 128 };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return undefined;
  const prefix = Number(prefixText) + (ipv4 ? 96 : 0);
  if (!ipv4 && prefix < 96 && isIpv4Mapped(groups)) return undefined;
  return { groups, prefix };
}

function isIpv4Mapped(groups: IpGroups): boolean {
  return groups.slice(0, 6).every((group, index) => group === (index === 5 ? 0xffff : 0));
}

/** Names that stand for the private ranges, as in proxy-addr. */
const namedRanges: Readonly<Record<string, readonly string[]>> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/**
 * Parses a list of addresses, CIDR ranges and the names `loopback`, `linklocal` and
 * `uniquelocal` (each entry may itself be a comma-separated list), for `option`'s error message.
 *
 * @throws TypeError naming the first entry that is none of these.
 */
export function parseRanges(entries: readonly string[], option: string): IpRange[] {
  return entries
    .flatMap((entry) => String(entry).split(","))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .flatMap((entry) => (Object.hasOwn(namedRanges, entry) ? (namedRanges[entry] ?? []) : [entry]))
    .map((entry) => {
      const range = parseRange(entry);
      if (range === undefined) {
        throw new TypeError(
          `${option}: ${JSON.stringify(entry)} is not an IP address, a CIDR range or loopback/linklocal/uniquelocal.`,
        );
      }
      return range;
    });
}

/** Whether `groups` lies in `range`. */
export function inRange(groups: IpGroups, { groups: network, prefix }: IpRange): boolean {
  for (let index = 0, bits = prefix; bits > 0; index++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((((groups[index] ?? 0) ^ (network[index] ?? 0)) & mask) !== 0) return false;
  }
  return true;
}
