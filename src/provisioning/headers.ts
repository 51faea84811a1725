// Reading a request's headers in whichever form the adapter has them (a record, Node's raw
// list, a Web Headers), and telling a browser's request.
import type { GuardedRequest, HeaderRecord, ProvisioningRequest, RequestHeaders } from "./types.ts";

/** Whether headers came as a flat `[name, value, ...]` list (Node's `req.rawHeaders`). */
export function isHeaderList(headers: RequestHeaders): headers is readonly string[] {
  return Array.isArray(headers);
}

/** Whether headers came as a Web `Headers` (duck-typed: one from another realm fails instanceof). */
function isWebHeaders(headers: RequestHeaders): headers is Headers {
  return typeof (headers as Headers).get === "function";
}

/** One header's value by lowercase name, from a record, a raw list or a Web `Headers`. */
export function headerOf(headers: RequestHeaders, name: string): string | undefined {
  if (isHeaderList(headers)) {
    for (let index = 0; index < headers.length; index += 2) {
      if (sameName(headers[index] as string, name)) return headers[index + 1];
    }
    return undefined;
  }
  if (isWebHeaders(headers)) return headers.get(name) ?? undefined;
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Compares a header name in any case with a lowercase one made of letters, digits and hyphens,
 * without allocating a lowercased copy: setting bit 0x20 lowercases a letter and leaves a digit
 * or a hyphen as it is.
 */
function sameName(key: string, lowercase: string): boolean {
  if (key.length !== lowercase.length) return false;
  for (let index = 0; index < key.length; index++) {
    if ((key.charCodeAt(index) | 0x20) !== lowercase.charCodeAt(index)) return false;
  }
  return true;
}

/** The request as a guard sees it: headers always a record, repeated ones joined as Node does. */
export function withHeaderRecord(request: ProvisioningRequest): GuardedRequest {
  const headers = request.headers;
  if (isWebHeaders(headers)) return guarded(request, Object.fromEntries(headers));
  if (!isHeaderList(headers)) return guarded(request, headers);
  // No prototype: a header named __proto__ stays a header.
  const record: Record<string, string> = Object.create(null);
  for (let index = 0; index < headers.length; index += 2) {
    const name = (headers[index] as string).toLowerCase();
    const value = headers[index + 1] as string;
    const seen = record[name];
    record[name] = seen === undefined ? value : `${seen}, ${value}`;
  }
  return guarded(request, record);
}

/**
 * The guard's copy of a request: its own properties, and the peer address too, which `handle`'s
 * caller may serve from a getter (handler.fetch looks it up only when it is read), which a spread
 * alone would leave behind.
 */
function guarded(request: ProvisioningRequest, headers: HeaderRecord): GuardedRequest {
  return { ...request, remoteAddress: request.remoteAddress, headers };
}

/**
 * Whether a web browser sent the request: it carries `Origin`, or `Sec-Fetch-Site` says
 * `cross-site` or `same-site`. Servers' HTTP clients send neither (Node's fetch sends
 * `Sec-Fetch-Mode` only). One pass over a raw header list.
 */
export function fromBrowser(headers: RequestHeaders): boolean {
  if (!isHeaderList(headers)) {
    return (
      headerOf(headers, "origin") !== undefined || crossSite(headerOf(headers, "sec-fetch-site"))
    );
  }
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index] as string;
    if (sameName(name, "origin")) return true;
    if (sameName(name, "sec-fetch-site") && crossSite(headers[index + 1])) return true;
  }
  return false;
}

function crossSite(site: string | undefined): boolean {
  return site === "cross-site" || site === "same-site";
}
