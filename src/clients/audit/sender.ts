// The delivery side of the Audit client: `concurrency` slots that take events from the queue and
// send each until it is settled, and the stop that a configuration error or close() puts to them.

import type { CallOptions } from "../integration-api/client-options.ts";
import type { ConfigurationError } from "../integration-api/errors.ts";
import type { IntegrationApi } from "../integration-api/http.ts";
import { auditEventPath, deliverAuditEvent } from "./audit-event.ts";
import type { AuditQueue } from "./audit-queue.ts";
import type { DeliveryReport } from "./delivery-report.ts";

/** What an {@link AuditSender} sends with, takes from and reports to. */
export interface AuditSenderOptions<Action extends string> {
  api: IntegrationApi;
  concurrency: number;
  queue: AuditQueue;
  report: DeliveryReport<Action>;
}

/**
 * Delivers the queue's events: each of `concurrency` slots takes an event, sends it, and on a
 * retryable failure holds it while it backs off on its own count of failures, so that a failing
 * API sees at most `concurrency` requests per backoff period while the other slots go on
 * delivering. A configuration error blocks every slot, events kept, until close or exit.
 */
export class AuditSender<Action extends string> {
  readonly #options: AuditSenderOptions<Action>;
  // Aborts in-flight deliveries when close() gives up on them.
  readonly #stop = new AbortController();
  #slots = 0;
  #scheduled = false;
  // Set by the first configuration error: delivery stops, events are kept until close or exit.
  #blocked: ConfigurationError | undefined;

  constructor(options: AuditSenderOptions<Action>) {
    this.#options = options;
  }

  /** The configuration error that stopped delivery, if one did. */
  get blocked(): ConfigurationError | undefined {
    return this.#blocked;
  }

  /** Starts slots for the queued events, in a microtask, unless delivery is blocked. */
  schedule(): void {
    if (!this.#scheduled && this.#blocked === undefined && this.#options.queue.queued > 0) {
      this.#scheduled = true;
      queueMicrotask(() => this.#pump());
    }
  }

  /** Aborts the deliveries under way; each settles promptly, and no slot takes another event. */
  abort(): void {
    this.#stop.abort();
  }

  /** Sends one event, once, outside the queue: `send()` of the client. */
  async sendOnce(body: string, callOptions: CallOptions): Promise<void> {
    await this.#options.api.request("POST", auditEventPath, {
      ...callOptions,
      json: body,
      retry: false,
    });
  }

  #pump(): void {
    this.#scheduled = false;
    const { concurrency, queue } = this.#options;
    while (this.#slots < concurrency && queue.queued > 0 && this.#blocked === undefined) {
      this.#slots++;
      void this.#runSlot();
    }
  }

  #next() {
    return this.#blocked === undefined && !this.#stop.signal.aborted
      ? this.#options.queue.take()
      : undefined;
  }

  /** One delivery slot: takes events until none is left, sending each until it is settled. */
  async #runSlot(): Promise<void> {
    const { api, queue, report } = this.#options;
    const { signal } = this.#stop;
    const onRetry = (error: unknown) => report.retried(error);
    let entry = this.#next();
    while (entry !== undefined) {
      const { body } = entry.item;
      const settled = await deliverAuditEvent(api, body, { signal, onRetry });
      if (settled.outcome === "stopped") {
        this.#block(settled.error);
        queue.requeue(entry);
        break;
      }
      if (settled.outcome === "aborted") {
        // Let go of, not released: with a spool the event stays on disk, for the next process.
        if (!queue.spooled) report.dropBodies("closed", [body], settled.error);
        queue.settle(entry);
      } else {
        if (settled.outcome === "delivered") report.delivered();
        else report.dropBodies(settled.redirect ? "redirected" : "rejected", [body], settled.error);
        queue.release(entry);
      }
      entry = this.#next();
    }
    this.#slots--;
  }

  /** Stops delivery for a failure that retrying cannot fix, reporting it once. */
  #block(error: ConfigurationError): void {
    if (this.#blocked !== undefined) return;
    this.#blocked = error;
    this.#options.report.failed(error);
    this.#options.queue.releaseWaiters();
  }
}
