import type { GuardedRequest, ProvisioningRequest } from "./handler.ts";

/** Header values by lowercase name, as in Node's `req.headers` or a Web Request's headers. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Whether headers came as a flat `[name, value, ...]` list (Node's `req.rawHeaders`). */
export function isHeaderList(
  headers: HeaderRecord | readonly string[],
): headers is readonly string[] {
  return Array.isArray(headers);
}

/** One header's value by lowercase name, from a record or a raw list. */
export function headerOf(
  headers: HeaderRecord | readonly string[],
  name: string,
): string | undefined {
  if (!isHeaderList(headers)) {
    const value = headers[name];
    return typeof value === "string" ? value : undefined;
  }
  for (let index = 0; index < headers.length; index += 2) {
    if (sameName(headers[index] as string, name)) return headers[index + 1];
  }
  return undefined;
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
  if (!isHeaderList(headers)) return { ...request, headers };
  // No prototype: a header named __proto__ stays a header.
  const record: Record<string, string> = Object.create(null);
  for (let index = 0; index < headers.length; index += 2) {
    const name = (headers[index] as string).toLowerCase();
    const value = headers[index + 1] as string;
    const seen = record[name];
    record[name] = seen === undefined ? value : `${seen}, ${value}`;
  }
  return { ...request, headers: record };
}
