// Guards of the Provisioning API's requests: the `authorize` option's type, a shared-secret
// header compared in constant time, and an allow-list of peer addresses.
import { inRange, parseIp, parseRanges } from "../internal/ip/ip-address.ts";
import type { GuardedRequest } from "./types.ts";

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
 * is in the list: addresses, CIDR ranges (IPv4 or IPv6: `"10.0.0.0/8"`, `"fd00::/8"`,
 * `"127.0.0.1"`) and the names `loopback`, `linklocal` and `uniquelocal`, read by the same rules
 * as the audit client's `trustProxy` (those of Express's "trust proxy"). An IPv4 address seen on
 * a dual-stack socket (`::ffff:10.1.2.3`) matches its IPv4 entry; an IPv4 range never matches an
 * IPv6 address, and `::/0` matches every address. Headers such as X-Forwarded-For are never read:
 * any client can set them. A request without a known address is refused.
 *
 * @example
 * ```ts
 * createProvisioningHandler({ store, authorize: allowAddresses(["10.0.0.0/8", "loopback"]) });
 * ```
 *
 * @throws TypeError naming an entry that is not an address, a range or one of the names.
 */
export function allowAddresses(allowed: readonly string[]): Authorize {
  const ranges = parseRanges(allowed, "allowAddresses");
  return (request) => {
    const peer = request.remoteAddress === undefined ? undefined : parseIp(request.remoteAddress);
    return peer !== undefined && ranges.some((range) => inRange(peer, range));
  };
}
