// The types of a client of a Provisioning API (the call, the answer, the target) and the client on
// fetch, one exchange of the platform's outbound layer (outbound.ts) per call.
import type { JsonValue } from "type-fest";
import { joinUrl } from "../internal/url.ts";
import { checkProvisioningUrl, exchange, maxAnswerBytes, parseBody } from "./outbound.ts";

/**
 * An application's Provisioning API called in-process, without a socket: anything with the
 * Fetch API's handler shape, such as the SDK's provisioning handler.
 */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

/**
 * Where the Provisioning API is: its base URL, as the platform's `provisioner` setting holds it
 * (`http://10.0.0.5:3000`, or with a path: `https://host/ldap/auth`), or a handler called in-process.
 */
export type ProvisioningTarget = string | URL | FetchHandler;

/** One call to the Provisioning API. `path` starts with `/v1/` and is already percent-encoded. */
export interface ProvisioningCall {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** The request body, sent as `application/json`. */
  body?: string;
}

/**
 * What came back: a status and the parsed body (JSON when it parses, else the text, else
 * undefined when empty), or `error` when no answer arrived (network error, time-out, abort), with
 * `fatal` when retrying cannot fix it (the application's certificate is not trusted).
 */
export type ProvisioningAnswer = (
  | {
      status: number;
      body: JsonValue | undefined;
      error?: undefined;
      timedOut?: undefined;
    }
  | {
      status?: undefined;
      body?: undefined;
      error: string;
      fatal?: true;
      /** Set when no answer came within the time-out. */
      timedOut?: true;
    }
) & {
  durationMs: number;
  /**
   * The answers to copies of this same request delivered just before it, oldest first: a
   * transport that delivers at least once may send a request more than once, as the platform
   * does. The delivery engine counts each copy as an attempt and reports each success. Absent
   * for a request sent once, as the SDK's own clients send it.
   */
  copies?: ProvisioningAnswer[];
};

/** Sends one request and resolves with the answer; it never rejects. */
export type ProvisioningApiClient = (
  request: ProvisioningCall,
  signal?: AbortSignal,
) => Promise<ProvisioningAnswer>;

// A handler sees requests for this origin; only the path matters to it.
const inProcessOrigin = "http://localhost";

/**
 * Makes the client on fetch, for every runtime: the simulator's, the conformance suite's, and the
 * directory sync's for a handler called in-process. One exchange of the platform's outbound layer
 * (outbound.ts) per call: no retries, no redirect followed, every status returned as it is,
 * because the exact status is what they judge.
 */
export function connectProvisioning(
  target: ProvisioningTarget,
  { timeoutMs }: { timeoutMs: number },
): ProvisioningApiClient {
  const handler = typeof target === "object" && !(target instanceof URL) ? target : undefined;
  const base = handler ? inProcessOrigin : checkProvisioningUrl(target as string | URL);
  const send = handler ? (request: Request) => handler.fetch(request) : fetch;
  return async (request, signal) => {
    const answer = await exchange(
      send,
      {
        url: joinUrl(base, request.path),
        method: request.method,
        ...(request.body !== undefined && {
          body: request.body,
          headers: { "content-type": "application/json" },
        }),
      },
      { timeoutMs, maxBytes: maxAnswerBytes, signal },
    );
    if (answer.error !== undefined) return answer;
    const { status, text, complete, durationMs } = answer;
    return { status, body: parseBody(text, complete), durationMs };
  };
}
