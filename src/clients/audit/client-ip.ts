// The client's address for an audit event's ipAddress: read from the socket, or from the one
// forwarding header the trusted proxies in front write.
import {
  formatIp,
  type IpGroups,
  inRange,
  parseIp,
  parseRanges,
} from "../../internal/ip/ip-address.ts";

/**
 * Which proxies in front of the application may report the client's address, like Express's
 * "trust proxy": a number of hops (1 = the one proxy in front), or addresses and CIDR ranges
 * (IPv4 or IPv6, a comma-separated string or an array, plus the names `loopback`, `linklocal` and
 * `uniquelocal`), or a function of the address and its hop (0 = the socket's peer).
 */
export type TrustProxy =
  | number
  | string
  | readonly string[]
  | ((address: string, hop: number) => boolean);

/** Options of {@link clientIp}. */
export interface ClientIpOptions {
  /** The proxies to trust. Default: none, so the socket's address is the answer and headers are ignored. */
  trustProxy?: TrustProxy | undefined;
  /**
   * The header your proxies write: `x-forwarded-for` (default) or the standard `forwarded`
   * (RFC 7239). Only one is read, because a proxy that writes one leaves the other to the client.
   */
  header?: "x-forwarded-for" | "forwarded" | undefined;
  /** The socket's remote address; required with a Web `Request`, which does not carry it. */
  remoteAddress?: string | undefined;
}

/** Node's `IncomingMessage` (Express, Fastify's `request.raw`, Koa's `ctx.req`) or headers with a socket. */
export interface NodeRequestLike {
  headers: Headers | Readonly<Record<string, string | string[] | undefined>>;
  socket?: { remoteAddress?: string | undefined } | null | undefined;
}

/**
 * The address of the client behind a request, for an audit event's `ipAddress`. It starts from
 * the socket's peer and walks the forwarding header from its right end, one hop per trusted
 * proxy; the first untrusted address is the client. With no trusted proxy (the default) the header
 * is ignored, so a client cannot choose its own address. IPv4-mapped IPv6 addresses come back as
 * IPv4; IPv6 in canonical form. Returns undefined when the address is unknown: no socket address,
 * or a trusted proxy that reported something other than an address (`unknown`, an obfuscated name).
 * In a server, prefer {@link createClientIp}, which checks the options once at startup.
 *
 * @example
 * ```ts
 * // Node, Express, Fastify (request.raw), Koa (ctx.req), behind one load balancer:
 * const ipAddress = clientIp(req, { trustProxy: 1 });
 * // A Web Request (Hono, Deno, Bun), behind proxies in 10.0.0.0/8:
 * const ipAddress = clientIp(c.req.raw, { remoteAddress: getConnInfo(c).remote.address, trustProxy: "10.0.0.0/8" });
 * ```
 *
 * @throws TypeError when `trustProxy` holds something other than addresses, ranges and names, or
 * `header` is neither `x-forwarded-for` nor `forwarded`.
 */
export function clientIp(
  source: Request | NodeRequestLike,
  options: ClientIpOptions = {},
): string | undefined {
  return createClientIp(options)(source, options.remoteAddress);
}

/**
 * Reads the client's address from a request, as {@link clientIp} does with the options given to
 * {@link createClientIp}. `remoteAddress` is the socket's address, required with a Web `Request`.
 */
export type ClientIpReader = (
  source: Request | NodeRequestLike,
  remoteAddress?: string | undefined,
) => string | undefined;

/**
 * {@link clientIp} with its options checked and compiled once: create it at startup, so that a
 * mistyped `trustProxy` (read from configuration, say) stops the application there instead of
 * failing every request, and no request parses the ranges again.
 *
 * @example
 * ```ts
 * // Behind proxies whose addresses the deployment gives, e.g. TRUST_PROXY="10.0.0.0/8":
 * const ipOf = createClientIp({ trustProxy: process.env.TRUST_PROXY });
 * app.post("/login", (req, res) => {
 *   audit.record({ action: actions.login, name: "user.login", ipAddress: ipOf(req) });
 * });
 * // A Web Request carries no socket: ipOf(request, getConnInfo(c).remote.address)
 * ```
 *
 * @throws TypeError when `trustProxy` holds something other than addresses, ranges and names, or
 * `header` is neither `x-forwarded-for` nor `forwarded`.
 */
export function createClientIp(
  options: Omit<ClientIpOptions, "remoteAddress"> = {},
): ClientIpReader {
  const trust = compileTrust(options.trustProxy);
  const name = compileHeader(options.header);
  return (source, remoteAddress) => {
    const peer = remoteAddress ?? (source as NodeRequestLike).socket?.remoteAddress;
    let address = peer === undefined ? undefined : parseIp(peer);
    if (address === undefined) return undefined;
    if (trust(address, 0)) {
      const value = readHeader(source, name);
      const hops =
        value === undefined ? [] : name === "forwarded" ? forwardedFor(value) : value.split(",");
      for (let hop = 1; hop <= hops.length; hop++) {
        address = parseForwardedAddress(hops[hops.length - hop] ?? "");
        if (address === undefined || !trust(address, hop)) break;
      }
    }
    return address === undefined ? undefined : formatIp(address);
  };
}

/** Header names are case-insensitive; any other header would be silently absent, so it throws. */
function compileHeader(header: string | undefined): "x-forwarded-for" | "forwarded" {
  const name = (header ?? "x-forwarded-for").toLowerCase();
  if (name === "x-forwarded-for" || name === "forwarded") return name;
  throw new TypeError(
    `header must be "x-forwarded-for" or "forwarded" (RFC 7239), got ${JSON.stringify(header)}.`,
  );
}

function compileTrust(trust: TrustProxy | undefined): (address: IpGroups, hop: number) => boolean {
  if (trust === undefined) return () => false;
  if (typeof trust === "number") {
    if (!Number.isSafeInteger(trust) || trust < 0) {
      throw new TypeError(
        `trustProxy as a number counts hops, a non-negative integer; got ${trust}.`,
      );
    }
    return (_, hop) => hop < trust;
  }
  if (typeof trust === "function") return (address, hop) => trust(formatIp(address), hop) === true;
  const ranges = parseRanges(typeof trust === "string" ? [trust] : trust, "trustProxy");
  return (address) => ranges.some((range) => inRange(address, range));
}

function readHeader(source: Request | NodeRequestLike, name: string): string | undefined {
  const { headers } = source;
  // Duck-typed: a Headers from another realm or polyfill fails instanceof.
  if (typeof headers.get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Readonly<Record<string, string | string[] | undefined>>)[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** An address as proxies write it: bare, `[v6]:port`, or `v4:port` (some load balancers add ports). */
function parseForwardedAddress(text: string): IpGroups | undefined {
  const value = text.trim();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? undefined : parseIp(value.slice(1, end));
  }
  const colon = value.indexOf(":");
  if (colon !== -1 && value.indexOf(":", colon + 1) === -1) return parseIp(value.slice(0, colon));
  return parseIp(value);
}

/** The `for` parameter of each element of a Forwarded header, in order ("" when one has none). */
function forwardedFor(value: string): string[] {
  return splitOutsideQuotes(value, ",").map((element) => {
    for (const pair of splitOutsideQuotes(element, ";")) {
      const equals = pair.indexOf("=");
      if (pair.slice(0, equals).trim().toLowerCase() !== "for") continue;
      const raw = pair.slice(equals + 1).trim();
      return raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, "$1") : raw;
    }
    return "";
  });
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === "\\" && quoted) index++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
