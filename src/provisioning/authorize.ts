import type { GuardedRequest } from "./handler.ts";

/**
 * A guard for the handler's `authorize` option: true lets the request through, false answers 403.
 * It sees the headers as a record by lowercase name, whatever form the adapter passed.
 */
export type Authorize = (request: GuardedRequest) => boolean | Promise<boolean>;

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/**
 * Accepts a request whose `header` carries exactly `secret`. The platform itself sends no
 * credentials, so use it only where something in front of the application (a proxy, a sidecar)
 * adds the header. The comparison takes the same time wherever the values differ: both are hashed
 * (Web Crypto, present on Node, Bun, Deno and Workers), and the digests compared without an early
 * exit, so neither the secret's content nor its length leaks through timing.
 *
 * @example
 * ```ts
 * createProvisioningHandler({
 *   store,
 *   authorize: sharedSecret({ header: "x-provisioning-token", secret: process.env.PROVISIONING_TOKEN! }),
 * });
 * ```
 */
export function sharedSecret(options: { header: string; secret: string }): Authorize {
  if (options.secret === "") throw new TypeError("sharedSecret needs a non-empty secret");
  const name = options.header.toLowerCase();
  let expected: Promise<Uint8Array> | undefined;
  return async (request) => {
    const value = request.headers[name];
    if (typeof value !== "string") return false;
    expected ??= sha256(options.secret);
    const [want, got] = await Promise.all([expected, sha256(value)]);
    let difference = 0;
    for (let index = 0; index < want.length; index++) {
      difference |= (want[index] as number) ^ (got[index] as number);
    }
    return difference === 0;
  };
}

/**
 * Accepts a request whose socket peer address (`request.remoteAddress`, supplied by the adapter)
 * is in the list: addresses or CIDR ranges, IPv4 or IPv6 (`"10.0.0.0/8"`, `"fd00::/8"`,
 * `"127.0.0.1"`). An IPv4 address seen on a dual-stack socket (`::ffff:10.1.2.3`) matches its IPv4
 * entry. Headers such as X-Forwarded-For are never read: any client can set them. A request
 * without a known address is refused.
 *
 * @example
 * ```ts
 * createProvisioningHandler({ store, authorize: allowAddresses(["10.0.0.0/8", "::1"]) });
 * ```
 */
export function allowAddresses(allowed: readonly string[]): Authorize {
  const ranges = allowed.map((entry) => {
    const [address = "", bits, ...rest] = entry.split("/");
    const bytes = parseAddress(address);
    // An IPv4-mapped entry (::ffff:10.0.0.0/104) counts its prefix over 128 bits, not 32.
    const mapped = bytes?.length === 4 && address.includes(":") ? 96 : 0;
    const width = (bytes?.length ?? 0) * 8 + mapped;
    const prefix = bits === undefined ? width : decimal.test(bits) ? Number(bits) : -1;
    if (!bytes || rest.length > 0 || prefix < mapped || prefix > width) {
      throw new TypeError(`allowAddresses: "${entry}" is not an IP address or CIDR range`);
    }
    return { bytes, prefix: prefix - mapped };
  });
  return (request) => {
    const peer =
      request.remoteAddress === undefined ? undefined : parseAddress(request.remoteAddress);
    return peer !== undefined && ranges.some((range) => inRange(peer, range.bytes, range.prefix));
  };
}

function inRange(peer: Uint8Array, network: Uint8Array, prefix: number): boolean {
  if (peer.length !== network.length) return false;
  for (let bit = 0; bit < prefix; bit += 8) {
    const mask = prefix - bit >= 8 ? 0xff : (0xff << (8 - (prefix - bit))) & 0xff;
    if (((peer[bit / 8] as number) & mask) !== ((network[bit / 8] as number) & mask)) return false;
  }
  return true;
}

const decimal = /^\d{1,3}$/;
const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const hexGroup = /^[0-9a-f]{1,4}$/i;

/** 4 bytes for IPv4 (also when written IPv4-mapped, `::ffff:a.b.c.d`), 16 for IPv6, or undefined. */
function parseAddress(text: string): Uint8Array | undefined {
  const zone = text.indexOf("%");
  const address = zone === -1 ? text : text.slice(0, zone);
  if (!address.includes(":")) return parseIPv4(address);
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groups = halves.map((half) => (half === "" ? [] : half.split(":")));
  const tail = groups[groups.length - 1] as string[];
  const last = tail[tail.length - 1];
  if (last?.includes(".")) {
    const embedded = parseIPv4(last);
    if (embedded === undefined) return undefined;
    tail.splice(-1, 1, hex(embedded[0], embedded[1]), hex(embedded[2], embedded[3]));
  }
  const count = groups.reduce((sum, half) => sum + half.length, 0);
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const words = [...(groups[0] ?? []), ...Array(8 - count).fill("0"), ...(groups[1] ?? [])];
  if (!words.every((word) => hexGroup.test(word))) return undefined;
  const bytes = new Uint8Array(16);
  words.forEach((word, index) => {
    const value = Number.parseInt(word, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  const isMapped =
    bytes.subarray(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return isMapped ? bytes.slice(12) : bytes;
}

function parseIPv4(text: string): Uint8Array | undefined {
  const octets = ipv4.exec(text)?.slice(1).map(Number);
  return octets?.every((octet) => octet <= 255) ? Uint8Array.from(octets) : undefined;
}

function hex(high = 0, low = 0): string {
  return ((high << 8) | low).toString(16);
}
