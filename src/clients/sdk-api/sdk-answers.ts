import * as z from "zod/mini";
import type { CallOptions } from "../integration-api/client-options.ts";
import {
  isHttpError,
  type PlatformApiKind,
  ReadOnlyModeError,
  ResponseShapeError,
  UnsupportedOperationError,
} from "../integration-api/errors.ts";
import type { ApiResponse, IntegrationApi, RequestOptions } from "../integration-api/http.ts";
import { parseJsonBody } from "../integration-api/json-body.ts";
import { sdkReadOnlySchema } from "./sdk-schemas.ts";

/** How the newer service marks an answer; each client result carries the flags it can have. */
export interface AnswerFlags {
  /**
   * The service could not refresh from the vendor and served its last copy (the header
   * `X-Replicated-Served-From-Cache`), or replayed a write.
   */
  fromCache: boolean;
}

/** Flags of a write answer. */
export interface WriteResult {
  /** The 2xx status of the answer (a replay carries the status first recorded). */
  status: number;
  /**
   * True when the service answered from its replay cache (`X-Replicated-Rate-Limited`), as it
   * defines it: a write to the same method, path and query with a JSON-equal body (an empty one
   * counts as `{}`) answered 2xx less than 60 seconds ago, so it got that answer's status and
   * body again and nothing was stored or sent upstream this time. The cache keys on the method,
   * so it knows nothing of other writes to the same data in between: after POST `{a}`, PATCH
   * `{b}`, a second POST `{a}` within the minute is replayed and the metrics stay `{a, b}`, not
   * `{a}`. It is not a failure and is not retried; to have such a write applied, wait out the
   * minute or change its body.
   */
  replayed: boolean;
}

/** Flags of a read answer served by the newer service. */
export interface ReadFlags extends AnswerFlags {
  /** Integration-mode data (a dev license's mock data), not the cluster's (X-Replicated-Mock-Data). */
  mockData: boolean;
}

export function readFlags(headers: Headers): ReadFlags {
  return {
    fromCache: headers.get("x-replicated-served-from-cache") === "true",
    mockData: headers.get("x-replicated-mock-data") === "true",
  };
}

export function writeResult(response: ApiResponse): WriteResult {
  return {
    status: response.status,
    replayed: response.headers.get("x-replicated-rate-limited") === "true",
  };
}

/** Parses and decodes a 2xx body with `schema`, or throws a ResponseShapeError that says why. */
export function decodeBody<Schema extends z.ZodMiniType>(
  response: ApiResponse,
  schema: Schema,
): z.output<Schema> {
  const decoded = z.safeDecode(schema, parseJsonBody(response) as z.input<Schema>);
  if (decoded.success) return decoded.data;
  throw new ResponseShapeError(response, z.prettifyError(decoded.error).replaceAll("\n", " "));
}

/** An endpoint of the newer service, with what to call it when an older one lacks it. */
export interface SdkEndpoint {
  /** The call, as `client.method`. */
  operation: string;
  /** What it does, for messages: "support bundle upload". */
  feature: string;
  /** The service version that added it, when later than the first. */
  since?: string;
}

/**
 * One call to the newer service: a 422 of read-only mode becomes a ReadOnlyModeError, a 404 or
 * a 405 (gorilla/mux's answers for a route or a method it does not have) an
 * UnsupportedOperationError that names the missing feature; anything else as the HTTP layer
 * reports it.
 */
export async function sdkRequest(
  api: IntegrationApi,
  kind: PlatformApiKind,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  endpoint: SdkEndpoint,
  options: CallOptions & Omit<RequestOptions, keyof CallOptions>,
): Promise<ApiResponse> {
  try {
    return await api.request(method, path, options);
  } catch (error) {
    if (!isHttpError(error)) throw error;
    if (error.status === 422) {
      const body = safeJson(error.body);
      const readOnly = z.safeDecode(sdkReadOnlySchema, body as z.input<typeof sdkReadOnlySchema>);
      if (readOnly.success) {
        throw new ReadOnlyModeError({
          method: error.method,
          url: error.url,
          attempts: error.attempts,
          serviceMessage: readOnly.data.error,
        });
      }
    }
    // gorilla/mux answers 404 for a path it does not route and 405 for a method it does not
    // take on a path it does: an older service that lacks the endpoint, or lacks this method on it.
    if (error.status === 404 || error.status === 405) {
      throw new UnsupportedOperationError(
        {
          api: kind,
          operation: endpoint.operation,
          reason: `${error.method} ${error.url} answered ${error.status}: this service version lacks ${error.status === 405 ? `${error.method} of ` : ""}${endpoint.feature}${endpoint.since === undefined ? "" : ` (added in ${endpoint.since})`}`,
          alternative:
            kind === "kots"
              ? "Upgrade the admin console (KOTS 1.102.0 and later take custom metrics), or check that the base URL names it."
              : "Upgrade the platform's SDK service (the replicated Helm chart), or check that the base URL names it.",
        },
        true,
      );
    }
    throw error;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
