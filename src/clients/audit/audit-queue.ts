// The events waiting to be sent: the bounded in-memory buffer, and with a spool the disk that
// feeds it. The buffer bounds memory; the spool, when there is one, holds every event until it is
// delivered or dropped.
import type { AuditDropReason } from "./audit-types.ts";
import { BoundedBuffer, type BufferEntry, type WaitOptions } from "./buffer.ts";
import { AuditSpool } from "./spool/audit-spool.ts";
import type { SpoolRecord } from "./spool/spool.ts";
import type { AuditSpoolOptions } from "./spool/spool-options.ts";

/** An event as the queue holds it: its JSON (with a spool, a record that says where it lies). */
export interface QueuedEvent {
  readonly body: string;
}

/** A queued event taken for delivery. */
export type TakenEvent = BufferEntry<QueuedEvent>;

/** The bounds, the spool and the hooks of an {@link AuditQueue}. */
export interface AuditQueueOptions {
  maxItems: number;
  maxBytes: number;
  spool: string | AuditSpoolOptions | undefined;
  /** The buffer stopped being empty. */
  onBusy: () => void;
  /** The buffer became empty again. */
  onIdle: () => void;
  /** Events entered the buffer: delivery can take them. */
  onFed: () => void;
  /** Events were lost on their way to the disk, or found unreadable there (`count` at least 1). */
  onLost: (reason: AuditDropReason, bodies: string[], error: unknown, count?: number) => void;
}

/**
 * The queue of the Audit client: `add` admits a recorded event (to the spool, or straight to the
 * buffer), `take` hands one to a delivery slot, and `release` lets go of it once delivered or
 * dropped, when the spool forgets it and feeds the buffer the next.
 */
export class AuditQueue {
  readonly #buffer: BoundedBuffer<QueuedEvent>;
  readonly #spool: AuditSpool | undefined;
  readonly #onFed: () => void;

  constructor(options: AuditQueueOptions) {
    this.#onFed = options.onFed;
    this.#buffer = new BoundedBuffer<QueuedEvent>({
      maxItems: options.maxItems,
      maxBytes: options.maxBytes,
      onBusy: options.onBusy,
      onIdle: options.onIdle,
    });
    this.#spool =
      options.spool === undefined
        ? undefined
        : new AuditSpool(options.spool, {
            onDurable: () => this.#refill(),
            onFailed: (bodies, reason, error) => options.onLost(reason, bodies, error),
            // The events cannot be read: at least one was lost there, counted as one.
            onDamaged: (error) => options.onLost("spool_damaged", [], error, 1),
          });
  }

  /** Whether events go through a spool on disk. */
  get spooled(): boolean {
    return this.#spool !== undefined;
  }

  get queued(): number {
    return this.#buffer.queued;
  }

  get inFlight(): number {
    return this.#buffer.inFlight;
  }

  get bytes(): number {
    return this.#buffer.bytes;
  }

  /** Events on disk, not yet delivered or dropped; undefined without a spool. */
  get onDisk(): number | undefined {
    return this.#spool?.events;
  }

  get isIdle(): boolean {
    return this.#buffer.isIdle;
  }

  /** Admits a recorded event; else says why it was dropped. */
  add(body: string, bytes: number): "overflow" | "spool_full" | undefined {
    if (this.#spool !== undefined)
      return this.#spool.append(body, bytes) ? undefined : "spool_full";
    if (!this.#buffer.offer({ body }, bytes)) return "overflow";
    this.#onFed();
    return undefined;
  }

  take(): TakenEvent | undefined {
    return this.#buffer.take();
  }

  /** Puts back an event taken, first in line. */
  requeue(entry: TakenEvent): void {
    this.#buffer.requeue(entry);
  }

  /** Lets go of an event delivered or dropped: the spool forgets it, and feeds the next. */
  release(entry: TakenEvent): void {
    if (this.#spool === undefined) {
      this.#buffer.settle(entry);
      return;
    }
    this.#spool.ack(entry.item as SpoolRecord);
    // Refilled into the room the entry frees, before the buffer checks whether it is idle: a full
    // buffer must not look idle (and flush() resolve true) while the spool holds events.
    this.#buffer.settle(entry, () => this.#refill());
  }

  /** Lets go of an event whose delivery was abandoned: a spool keeps it, for the next process. */
  abandon(entry: TakenEvent): void {
    this.#buffer.settle(entry);
  }

  /** Takes every queued event out (not those in flight). */
  drainQueued(): QueuedEvent[] {
    return this.#buffer.drainQueued();
  }

  /** The events held now, queued and in flight. */
  snapshot(): QueuedEvent[] {
    return this.#buffer.snapshot();
  }

  whenIdle(options: WaitOptions): Promise<boolean> {
    return this.#buffer.whenIdle(options);
  }

  /** Resolves every `whenIdle` waiting now, with the buffer's state. */
  releaseWaiters(): void {
    this.#buffer.releaseWaiters();
  }

  /** Resolves once every event added so far is on disk: true, or false without a spool. */
  persisted(): Promise<boolean> {
    return this.#spool === undefined ? Promise.resolve(false) : this.#spool.persisted();
  }

  /** Closes the spool, if any. */
  async close(): Promise<void> {
    await this.#spool?.close();
  }

  /** At exit: writes what waits for a commit. False without a spool, whose events are lost. */
  closeSync(): boolean {
    if (this.#spool === undefined) return false;
    this.#spool.closeSync();
    return true;
  }

  #refill(): void {
    // An event larger than maxQueueBytes (recorded under other options) still goes, alone.
    this.#spool?.refill(
      (record, bytes) =>
        this.#buffer.offer(record, bytes) || this.#buffer.offerAlone(record, bytes),
    );
    this.#onFed();
  }
}
