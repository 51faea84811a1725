// Fault injection for tests: a wrapper around the client of a Provisioning API, so that the
// delivery engine and the directory sync carry no test-only code path.
import { kindOfRequest, type MessageKind, successStatus } from "../platform/messages.ts";
import type {
  ProvisioningAnswer,
  ProvisioningApiClient,
} from "../platform/provisioning-api-client.ts";

/**
 * A fault to inject into the next message (or the next of one kind): `drop-request` fails the
 * call with a network error before the application sees it; `drop-response` lets the
 * application process it and loses the answer; `duplicate` delivers it twice in a row. The last
 * two are how the platform redelivers in production.
 */
export interface Fault {
  type: "drop-request" | "drop-response" | "duplicate";
  /** Only messages of this kind; any message (ping included) when absent. */
  on?: MessageKind;
  /** How many messages it hits (default 1). */
  times?: number;
}

/** A client of a Provisioning API whose next calls can be made to fail: see {@link withFaults}. */
export interface FaultyClient extends ProvisioningApiClient {
  /** Queues a fault for the next matching call, however much later it comes. */
  injectFault(fault: Fault): void;
}

/**
 * Wraps a client of a Provisioning API so that a test can inject faults into its coming calls,
 * one call per message: the platform simulator's `injectFault` is this wrapper's, and a directory
 * sync takes it through its `wrapClient` option. Calls without a queued fault pass through as
 * they are.
 *
 * @example
 * ```ts
 * let faults: FaultyClient | undefined;
 * const sync = createDirectorySync({ ...options, wrapClient: (client) => (faults = withFaults(client)) });
 * faults?.injectFault({ type: "drop-response", on: "create" }); // stored, the answer lost
 * expect((await sync.syncOnce()).stoppedAt?.error).toMatch(/dropped/);
 * ```
 */
export function withFaults(client: ProvisioningApiClient): FaultyClient {
  const faults: (Fault & { times: number })[] = [];

  const takeFault = (kind: MessageKind): Fault["type"] | undefined => {
    const index = faults.findIndex((fault) => fault.on === undefined || fault.on === kind);
    const fault = faults[index];
    if (!fault) return undefined;
    if (--fault.times === 0) faults.splice(index, 1);
    return fault.type;
  };

  const faulty: ProvisioningApiClient = async (request, signal) => {
    const kind = kindOfRequest(request);
    const fault = takeFault(kind);
    if (fault === "drop-request") {
      return { error: "connection dropped before the request (injected fault)", durationMs: 0 };
    }
    const answer = await client(request, signal);
    if (fault === "drop-response" && answer.status !== undefined) {
      return {
        error: "connection dropped before the answer (injected fault)",
        durationMs: answer.durationMs,
      };
    }
    // A duplicate is sent again only after a success: a failed first copy stops the cycle there.
    if (fault !== "duplicate" || answer.status !== successStatus[kind]) return answer;
    const again: ProvisioningAnswer = await client(request, signal);
    return { ...again, copies: [answer] };
  };

  return Object.assign(faulty, {
    injectFault: (fault: Fault) => {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
  });
}
