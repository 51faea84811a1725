// What the Audit client tells about its deliveries: the counters of stats(), and every drop and
// failed attempt reported through the application's hooks.
import { type AuditEvent, decodeAuditEvent } from "./audit-event.ts";
import { type AuditDrop, type AuditDropReason, auditDropReasons } from "./audit-types.ts";
import { callHook } from "./hooks.ts";

/** The counters of `stats()` that the delivery report keeps. */
export interface DeliveryCounts {
  delivered: number;
  dropped: number;
  droppedByReason: Record<AuditDropReason, number>;
  retried: number;
  lastError?: { message: string; at: string };
}

/**
 * Counts what became of the events and reports each drop (`onDrop`) and each failure (`onError`),
 * a hook's exception never reaching the delivery.
 */
export class DeliveryReport<Action extends string> {
  readonly #onDrop: (drop: AuditDrop<Action>) => void;
  readonly #onError: (error: unknown) => void;
  // Drops noticed inside record() are reported after it returns, one report per reason and tick.
  readonly #deferred = new Map<AuditDropReason, { events: AuditEvent<Action>[]; error: unknown }>();
  readonly #droppedByReason = Object.fromEntries(
    auditDropReasons.map((reason) => [reason, 0]),
  ) as Record<AuditDropReason, number>;
  #delivered = 0;
  #dropped = 0;
  #retried = 0;
  #lastError: { message: string; at: string } | undefined;

  constructor(hooks: {
    onDrop: (drop: AuditDrop<Action>) => void;
    onError: (error: unknown) => void;
  }) {
    this.#onDrop = hooks.onDrop;
    this.#onError = hooks.onError;
  }

  /** An event the API accepted. */
  delivered(): void {
    this.#delivered++;
  }

  /** A failed attempt that will be retried. */
  retried(error: unknown): void {
    this.#retried++;
    this.failed(error);
  }

  /** A failure reported as it happens: a retried attempt, or the error that stops delivery. */
  failed(error: unknown): void {
    this.#noteError(error);
    callHook(this.#onError, error);
  }

  /** Reports `count` events dropped for `reason` (one report), `events` those still known. */
  drop(
    reason: AuditDropReason,
    events: AuditEvent<Action>[],
    error?: unknown,
    count = events.length,
  ) {
    if (count === 0) return;
    this.#dropped += count;
    this.#droppedByReason[reason] += count;
    if (error !== undefined) this.#noteError(error);
    callHook(this.#onDrop, { reason, count, events, ...(error === undefined ? {} : { error }) });
  }

  /** {@link drop} for events held as their JSON. */
  dropBodies(reason: AuditDropReason, bodies: readonly string[], error?: unknown): void {
    this.drop(
      reason,
      bodies.map((body) => decodeAuditEvent(body) as AuditEvent<Action>),
      error,
    );
  }

  /** {@link drop}, reported after the current task: `record()` returns before any hook runs. */
  dropLater(
    reason: "overflow" | "closed" | "spool_full" | "configuration",
    event: AuditEvent<Action>,
    error?: unknown,
  ): void {
    const batch = this.#deferred.get(reason);
    if (batch !== undefined) return void batch.events.push(event);
    this.#deferred.set(reason, { events: [event], error });
    queueMicrotask(() => {
      const { events = [], error: cause } = this.#deferred.get(reason) ?? {};
      this.#deferred.delete(reason);
      this.drop(reason, events, cause);
    });
  }

  counts(): DeliveryCounts {
    return {
      delivered: this.#delivered,
      dropped: this.#dropped,
      droppedByReason: { ...this.#droppedByReason },
      retried: this.#retried,
      ...(this.#lastError === undefined ? {} : { lastError: { ...this.#lastError } }),
    };
  }

  #noteError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.#lastError = { message, at: new Date().toISOString() };
  }
}
