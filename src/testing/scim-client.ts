import type { JsonValue } from "type-fest";
import { joinUrl, normalizeBaseUrl } from "../internal/url.ts";
import { exchange, maxAnswerBytes, parseBody } from "../platform/outbound.ts";
import type { FetchHandler } from "../platform/provisioning-api-client.ts";

/**
 * Where a SCIM service is: its base URL, the part before `/Users` (`https://host/scim/v2`), or a
 * handler called in-process, at `http://localhost` under its `basePath` when it has one (as
 * `createScimHandler`'s does), else at the root.
 */
export type ScimTarget = string | URL | (FetchHandler & { readonly basePath?: string });

/** The media type RFC 7644 §8.1 gives SCIM messages; Entra ID sends it, Okta sends JSON's. */
export const scimMediaType = "application/scim+json";

/** One SCIM request. `path` starts with `/` (`/Users?filter=…`), already percent-encoded. */
export interface ScimCall {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  /** Sent as JSON, with `contentType` (default `application/scim+json`). */
  body?: unknown;
  contentType?: string;
  /** The Authorization header in place of the bearer token: Okta's test sends `non-token`. */
  authorization?: string;
  /** How much of the answer is read (default 64 KiB): a page of users takes {@link maxPageBytes}. */
  maxBytes?: number;
}

/**
 * How much of a page of users is read: 100 users with their enterprise attributes are ~90 KiB,
 * past the 64 KiB other answers are read up to; 4 MiB leaves each of 100 users 40 KiB, and still
 * bounds what a service that never ends its answer can make the reader hold.
 */
export const maxPageBytes = 4 * 1024 * 1024;

/** What came back: a status, the parsed body and the headers a check reads, or why none came. */
export type ScimAnswer = (
  | {
      status: number;
      body: JsonValue | undefined;
      /** The answer's `Content-Type`, `Location` and `ETag` headers, when present. */
      headers: { contentType?: string; location?: string; etag?: string };
      /**
       * Set when the body was longer than the read (64 KiB, or the call's `maxBytes`): `body`
       * is then its start, as text, marked so. An answer that never ends is cut there too.
       */
      cutOff?: true;
      error?: undefined;
      timedOut?: undefined;
    }
  | {
      status?: undefined;
      body?: undefined;
      headers?: undefined;
      cutOff?: undefined;
      error: string;
      timedOut?: true;
    }
) & { durationMs: number };

/** Sends one SCIM request and resolves with the answer; never rejects. */
export type ScimClient = (call: ScimCall, signal?: AbortSignal) => Promise<ScimAnswer>;

// A handler sees requests for this origin; only the path matters to it.
const inProcessOrigin = "http://localhost";

/**
 * A SCIM client on fetch for the checker and the fake identity provider, over the platform side's
 * outbound layer (`exchange`): no retries, every status returned as it is (the exact status is
 * what they judge; a redirect is not followed), answers read up to 64 KiB (a call's `maxBytes`),
 * `Authorization: Bearer <token>` on every call.
 *
 * @throws TypeError for a base URL that is not an http(s) URL without credentials or query.
 */
export function connectScim(
  target: ScimTarget,
  { token, timeoutMs }: { token?: string | undefined; timeoutMs: number },
): ScimClient {
  const handler = typeof target === "object" && !(target instanceof URL) ? target : undefined;
  let base = `${inProcessOrigin}${typeof handler?.basePath === "string" ? handler.basePath : ""}`;
  if (!handler) {
    try {
      base = normalizeBaseUrl(target as string | URL);
    } catch (error) {
      throw new TypeError(`The SCIM base URL ${(error as Error).message}`);
    }
  }
  const send = handler ? (request: Request) => handler.fetch(request) : fetch;
  return async (call, signal) => {
    const headers: Record<string, string> = {
      accept: `${scimMediaType}, application/json`,
    };
    const authorization =
      call.authorization ?? (token === undefined ? undefined : `Bearer ${token}`);
    if (authorization !== undefined) headers.authorization = authorization;
    if (call.body !== undefined) headers["content-type"] = call.contentType ?? scimMediaType;
    // The platform side's one outbound layer: the time-out and the signal bound the whole
    // exchange, the answer is read under the cap, a redirect is the answer (its exact status is
    // what a check judges), and a failure is described as for the Provisioning API.
    const answer = await exchange(
      send,
      {
        url: joinUrl(base, call.path),
        method: call.method,
        headers,
        ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      },
      { timeoutMs, maxBytes: call.maxBytes ?? maxAnswerBytes, signal },
    );
    if (answer.status === undefined) {
      return {
        error: answer.error,
        ...(answer.timedOut && { timedOut: true as const }),
        durationMs: answer.durationMs,
      };
    }
    const read = (name: string) => answer.headers.get(name) ?? undefined;
    const contentType = read("content-type");
    const location = read("location");
    const etag = read("etag");
    return {
      status: answer.status,
      body: parseBody(answer.text, answer.complete),
      headers: {
        ...(contentType !== undefined && { contentType }),
        ...(location !== undefined && { location }),
        ...(etag !== undefined && { etag }),
      },
      ...(!answer.complete && { cutOff: true as const }),
      durationMs: answer.durationMs,
    };
  };
}

/** `/Users?filter=…` for a filter, with the other query parameters given. */
export function usersQuery(filter: string | undefined, parameters: Record<string, number> = {}) {
  const query = new URLSearchParams();
  if (filter !== undefined) query.set("filter", filter);
  for (const [name, value] of Object.entries(parameters)) query.set(name, String(value));
  // URLSearchParams writes a space as "+", which RFC 3986 servers may read literally.
  const text = query.toString().replaceAll("+", "%20");
  return text === "" ? "/Users" : `/Users?${text}`;
}

/** A SCIM string literal in a filter: JSON's string form, as RFC 7644 §3.4.2.2 says. */
export const filterString = (value: string) => JSON.stringify(value);
