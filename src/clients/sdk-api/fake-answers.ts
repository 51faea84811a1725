import * as z from "zod/mini";
import { type FakeRoute, json } from "../integration-api/fake-answers.ts";
import { Timestamp } from "../integration-api/timestamp.ts";

// The newer API's fakes' shared pieces, record-free: the route's service-side traits (a write,
// read-only refusal, dev-license only, the version that added it), the mode switches, what each
// client folder's part of the fake reads from the others (the context), and the answers of a Go
// service (gorilla/mux texts, encoding/json's decoding). The parts live beside their records
// (app/fake*.ts, license/fake-sdk-api.ts); src/testing/fake-sdk-api.ts composes them.

/** The service's behaviour switches; each can be changed at any time with `setMode()`. */
export interface FakeSdkMode {
  /**
   * Air gap: updates are always `[]`, support bundle uploads answer 400, and custom metrics go
   * to the service's local report instead of the vendor (still in `reportedCustomMetrics`).
   */
  airgap?: boolean;
  /**
   * Read-only mode, as the service (1.19.0+) does it: DELETE of a custom metric, instance tags,
   * support bundle metadata and mock data answer 422 `{"error":…,"readOnlyMode":true}`; POST and
   * PATCH of custom metrics answer 200 without storing anything (a PATCH merges with what was
   * stored before) and still report the result, except in an air gap, where it is dropped.
   */
  readOnly?: boolean;
  /**
   * Integration mode (a `"dev"` license only): app info, status, updates and history serve the
   * mock data (see `FakeSdkApi.setMockData`) with `X-Replicated-Mock-Data: true`.
   */
  integrationMode?: boolean;
  /**
   * The service runs from a Helm release (default true, as the chart always sets): when false,
   * history answers 400 `{}` outside integration mode.
   */
  helmManaged?: boolean;
  /** The vendor is unreachable: license and updates carry `X-Replicated-Served-From-Cache: true`. */
  servedFromCache?: boolean;
  /**
   * The service's version (default "1.19.0"): before 1.17.0 there is no support bundle upload,
   * before 1.18.0 no support bundle metadata; their routes answer 404.
   */
  serviceVersion?: string;
}

/** The service version a fake reports unless told another. */
export const defaultServiceVersion = "1.19.0";

/** A route of the newer API's fake, with the traits the router applies around it. */
export interface SdkFakeRoute extends FakeRoute {
  /** A write, recorded in `writes`; the replay cache keys the `cached` ones. */
  write?: "cached" | "uncached";
  /** Read-only mode refuses it with 422 and this message (the service's own). */
  refusedReadOnly?: string;
  /** Only for a `"dev"` license: anything else answers 403 (the service's EnforceMockAccess). */
  devOnly?: boolean;
  /** The service version that added the route. */
  since?: string;
}

/** What a part of the fake reads from the rest: the clock, the modes, the license's facts. */
export interface SdkFakeContext {
  now(): Date;
  /** The fake's clock at its creation: the default date of releases and updates. */
  readonly created: Date;
  /** The mode switches now in force. */
  mode(): Readonly<Required<FakeSdkMode>>;
  /** What the app's answers take from the license (the license's fake says). */
  license(): LicenseFacts;
}

/** What the rest of the newer API's fake reads from the license. */
export interface LicenseFacts {
  /** A development license: integration mode and its routes need one. */
  development: boolean;
  /** The app info's defaults for its own fields. */
  appSlug: string | undefined;
  channelName: string | undefined;
}

/** Integration mode is on and the license allows it. */
export function integrationOn(context: SdkFakeContext): boolean {
  return context.mode().integrationMode && context.license().development;
}

/** The header of an answer served from the service's last copy, when the mode says so. */
export function staleHeaders(context: SdkFakeContext): Record<string, string> {
  return context.mode().servedFromCache ? { "x-replicated-served-from-cache": "true" } : {};
}

/** A JSON answer encoded by the schema the clients decode it with. */
export function encoded<Schema extends z.ZodMiniType>(
  schema: Schema,
  value: z.output<Schema>,
  headers: Record<string, string> = {},
  status = 200,
): Response {
  return goJson(status, z.encode(schema, value), headers);
}

/** A timestamp from text or a `Date`; `fallback` (or nothing) when absent. */
export function stamp(value: string | Date | undefined, fallback?: Date): Timestamp | undefined {
  if (value === undefined) {
    return fallback === undefined ? undefined : Timestamp.parse(fallback.toISOString());
  }
  return Timestamp.parse(typeof value === "string" ? value : value.toISOString());
}

/** Whether `version` predates `since` (major.minor.patch); false when either is absent. */
export function olderThan(version: string, since: string | undefined): boolean {
  if (since === undefined) return false;
  const parts = (text: string) => text.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
  const [a = [], b = []] = [parts(version), parts(since)];
  for (let index = 0; index < 3; index++) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference < 0;
  }
  return false;
}

/** A JSON answer as the service writes it: the Integration API's fake's, the same bytes. */
export const goJson = json;

/** A text answer as the service (and gorilla/mux) writes it. */
export function goText(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** What {@link parseStrict} returns for a body Go's decoder refuses. */
export const invalidJson = Symbol("invalid JSON");

/** Go's json.Decoder: an empty body is an error (EOF), as is one that is not JSON. */
export function parseStrict(body: string): unknown {
  if (body.trim() === "") return invalidJson;
  try {
    return JSON.parse(body);
  } catch {
    return invalidJson;
  }
}

/** A lenient read of a body: `{}` when empty, undefined when it is not JSON. */
export function parseLenient(body: string): unknown {
  if (body.trim() === "") return {};
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A JSON object, not null and not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
