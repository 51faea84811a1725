import { type PlatformApiKind, UnsupportedOperationError } from "../integration-api/errors.ts";
import type { CustomMetrics } from "./read-app.ts";

// What the app client checks before it sends: values the service would refuse, said at once
// with the call's name, and the 400 of custom metrics that were not passed on.

/** The admin console takes custom metrics by POST only: the whole set each time. */
export function postOnlyOnKots(kind: PlatformApiKind, operation: string): void {
  if (kind !== "kots") return;
  throw new UnsupportedOperationError({
    api: kind,
    operation,
    alternative:
      "The admin console takes custom metrics by POST only: send the whole set with setCustomMetrics().",
  });
}

/**
 * The custom-metrics endpoints answer 400 with an empty body when the metrics could not be
 * passed on (their other 400s carry a message): in the service's source, a failed send to the
 * vendor (usually its uplink, which passes; possibly the vendor's refusal, which does not) or
 * an air-gap report that could not be written. Mostly transient, so retried like a 5xx; the
 * message says only what is known.
 */
export function metricsNotSent(status: number, body: string): string | undefined {
  if (status !== 400 || body.trim() !== "") return undefined;
  return "The custom metrics could not be passed on (a 400 with an empty body): in the platform's SDK service that means its send to the vendor failed (most often its uplink, which passes; possibly the vendor refusing them, as for a revoked license, which does not), or in an air gap that its report could not be written. Retried under the client's retry settings; if it persists, read the service's log. Whether it kept its own copy is not known, so the next successful call sends the whole set again.";
}

function plainEntries(data: unknown, method: string): [string, unknown][] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(`${method}() takes an object of names to values.`);
  }
  return Object.entries(data);
}

/** The service refuses empty data and null, array or object values: say so before sending. */
export function checkMetrics(data: CustomMetrics, method: string): CustomMetrics {
  const entries = plainEntries(data, method);
  if (entries.length === 0) throw new TypeError(`${method}() needs at least one metric.`);
  for (const [name, value] of entries) {
    const scalar =
      typeof value === "string" ||
      typeof value === "boolean" ||
      (typeof value === "number" && Number.isFinite(value));
    if (!scalar) {
      throw new TypeError(
        `${method}(): the metric ${JSON.stringify(name)} must be a string, a finite number or a boolean, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.`,
      );
    }
  }
  return Object.fromEntries(entries) as CustomMetrics;
}

export function checkStrings(
  data: Record<string, string>,
  method: string,
  what: string,
): Record<string, string> {
  const entries = plainEntries(data, method);
  const wrong = entries.find(([, value]) => typeof value !== "string");
  if (wrong !== undefined) {
    throw new TypeError(`${method}(): the ${what} ${JSON.stringify(wrong[0])} must be a string.`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
