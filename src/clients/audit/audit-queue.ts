// The events waiting to be sent: the bounded in-memory buffer (buffer.ts, whose members delivery
// uses as they are), and with a spool the disk under it. This module owns the one rule between
// the two: with a spool an event is admitted to disk, fed into the buffer as room frees up, and
// forgotten by the spool once delivered or dropped; the buffer bounds memory, the spool the disk.
import type { AuditDropReason } from "./audit-types.ts";
import { BoundedBuffer, type BufferEntry } from "./buffer.ts";
import { recordHeaderBytes } from "./spool/record-format.ts";
import { Spool, type SpoolRecord } from "./spool/spool.ts";
import { type AuditSpoolOptions, normalizeSpoolOptions } from "./spool/spool-options.ts";

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
 * The queue of the Audit client: a {@link BoundedBuffer} of events that delivery takes from,
 * requeues and settles as it does any buffer's entries (`settle` lets go of an event whose
 * delivery was abandoned: a spool keeps it, for the next process). Events come in through `add`,
 * never `offer`: with a spool they go to disk first. `release` lets go of an event delivered or
 * dropped for good, when the spool forgets it and feeds the buffer the next.
 */
export class AuditQueue extends BoundedBuffer<QueuedEvent> {
  readonly #spool: Spool | undefined;
  readonly #onFed: () => void;
  // A record taken from the spool that the buffer had no room for: offered first next time.
  #held: SpoolRecord | undefined;

  constructor(options: AuditQueueOptions) {
    super(options);
    this.#onFed = options.onFed;
    this.#spool =
      options.spool === undefined
        ? undefined
        : openSpool(options.spool, () => this.#refill(), options.onLost);
  }

  /** Whether events go through a spool on disk. */
  get spooled(): boolean {
    return this.#spool !== undefined;
  }

  /** Events on disk, not yet delivered or dropped; undefined without a spool. */
  get onDisk(): number | undefined {
    return this.#spool?.stats().events;
  }

  /** Admits a recorded event; else says why it was dropped. */
  add(body: string, bytes: number): "overflow" | "spool_full" | undefined {
    if (this.#spool !== undefined)
      return this.#spool.append(body, bytes) ? undefined : "spool_full";
    if (!this.offer({ body }, bytes)) return "overflow";
    this.#onFed();
    return undefined;
  }

  /** Lets go of an event delivered or dropped: the spool forgets it, and feeds the next. */
  release(entry: TakenEvent): void {
    if (this.#spool === undefined) {
      this.settle(entry);
      return;
    }
    this.#spool.ack(entry.item as SpoolRecord);
    // Refilled into the room the entry frees, before the buffer checks whether it is idle: a full
    // buffer must not look idle (and flush() resolve true) while the spool holds events.
    this.settle(entry, () => this.#refill());
  }

  /** Resolves once every event added so far is on disk: true, or false without a spool. */
  persisted(): Promise<boolean> {
    return this.#spool === undefined ? Promise.resolve(false) : this.#spool.persisted();
  }

  /** Closes the spool, if any: what was not acknowledged stays on disk for the next process. */
  async close(): Promise<void> {
    await this.#spool?.close();
  }

  /** At exit: writes what waits for a commit. False without a spool, whose events are lost. */
  closeSync(): boolean {
    if (this.#spool === undefined) return false;
    this.#spool.closeSync();
    return true;
  }

  /** Offers durable records, oldest first, until the buffer refuses one. */
  #refill(): void {
    const spool = this.#spool as Spool;
    for (;;) {
      const record = this.#held ?? spool.take(1)[0];
      if (record === undefined) break;
      this.#held = record;
      // An event larger than maxQueueBytes (recorded under other options) still goes, alone.
      const bytes = record.bytes - recordHeaderBytes;
      if (!this.offer(record, bytes) && !this.offerAlone(record, bytes)) break;
      this.#held = undefined;
    }
    this.#onFed();
  }
}

/**
 * Opens the spool under the queue: what becomes durable is fed to the buffer (`onDurable`), what
 * could not be written or read is reported lost.
 */
function openSpool(
  option: string | AuditSpoolOptions,
  onDurable: () => void,
  onLost: AuditQueueOptions["onLost"],
): Spool {
  return Spool.open({
    ...normalizeSpoolOptions(option),
    onDurable,
    onFailed: (bodies, reason, error) => onLost(reason, bodies, error),
    onSkipped: ({ file, offset, bytes }) => {
      const error = new Error(
        `The audit spool skipped ${bytes} unreadable bytes at ${offset} of ${file} (a write torn by a crash, or damage on disk).`,
      );
      // The events cannot be read: at least one was lost there, counted as one. Reported after
      // the queue's constructor returned, so that the client's hooks are in place.
      queueMicrotask(() => onLost("spool_damaged", [], error, 1));
    },
  });
}
