// Health figures of one handler: what `handler.stats()` returns, counted on every answer. Plain
// counters, so that a /healthz route reads them without OpenTelemetry.
import type { QuarantineStats } from "../users/quarantine.ts";
import type { ProvisioningResponse } from "./types.ts";

/** What a request was, for the counters: an operation, or `other` for an unknown route. */
export type CountedOperation = "ping" | "create" | "modify" | "delete" | "reset" | "other";

/** The handler's figures since it was created; see `ProvisioningHandler.stats()`. */
export interface ProvisioningStats {
  /** Answers by operation, then by status code: `{ create: { "201": 120, "503": 2 } }`. */
  messages: Partial<Record<CountedOperation, Record<string, number>>>;
  /** When the last request was answered (ISO 8601), whatever its status. */
  lastMessageAt?: string;
  /** The last answer outside 2xx: its error code (`store_unavailable`, ...), status and time. */
  lastError?: { code: string; status: number; at: string };
  /** Requests being answered now. */
  inFlight: number;
  /** With the `quarantine` option: messages kept, released and discarded, and those waiting. */
  quarantine?: QuarantineStats;
}

/** The counters behind {@link ProvisioningStats}. */
export interface StatsCounter {
  start(): void;
  finish(operation: CountedOperation, response: ProvisioningResponse): void;
  snapshot(): ProvisioningStats;
}

export function createStatsCounter(): StatsCounter {
  const messages: Partial<Record<CountedOperation, Record<string, number>>> = {};
  let inFlight = 0;
  // Milliseconds, turned into text only when read.
  let lastMessageAt = 0;
  let lastError: { code: string; status: number; at: number } | undefined;
  return {
    start() {
      inFlight++;
    },
    finish(operation, response) {
      inFlight--;
      lastMessageAt = Date.now();
      const byStatus = messages[operation] ?? {};
      messages[operation] = byStatus;
      byStatus[response.status] = (byStatus[response.status] ?? 0) + 1;
      if (response.status >= 300) {
        lastError = { code: errorCodeOf(response), status: response.status, at: lastMessageAt };
      }
    },
    snapshot() {
      return {
        messages: Object.fromEntries(
          Object.entries(messages).map(([operation, byStatus]) => [operation, { ...byStatus }]),
        ),
        ...(lastMessageAt === 0 ? {} : { lastMessageAt: new Date(lastMessageAt).toISOString() }),
        ...(lastError === undefined
          ? {}
          : { lastError: { ...lastError, at: new Date(lastError.at).toISOString() } }),
        inFlight,
      };
    },
  };
}

/** The `error` member of an error answer's JSON body; read only for answers outside 2xx. */
function errorCodeOf(response: ProvisioningResponse): string {
  try {
    const code: unknown = JSON.parse(response.body ?? "").error;
    return typeof code === "string" ? code : "unknown";
  } catch {
    return "unknown";
  }
}
