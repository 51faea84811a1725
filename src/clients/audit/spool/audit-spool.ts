import { recordHeaderBytes } from "./record-format.ts";
import { Spool, type SpoolFailure, type SpoolRecord } from "./spool.ts";
import { type AuditSpoolOptions, normalizeSpoolOptions } from "./spool-options.ts";

/** What the audit client gives its spool: where durable events and failures go. */
export interface AuditSpoolHooks {
  /** New durable events can be taken (call `refill`). */
  onDurable: () => void;
  /** Events that could not be written: they are not on disk, and must be reported as dropped. */
  onFailed: (bodies: string[], reason: SpoolFailure, error: unknown) => void;
  /**
   * Unreadable bytes found at open, one stretch per call, after the constructor returned: the
   * events they held (at least one) cannot be read, and must be reported as dropped.
   */
  onDamaged: (error: Error) => void;
}

/**
 * The spool as the audit client uses it: events are appended on `record()`, fed from disk into
 * the client's bounded in-memory buffer as room frees up, and acknowledged after a 2xx (or a
 * drop), so that the buffer bounds memory while the spool bounds the disk.
 */
export class AuditSpool {
  readonly #spool: Spool;
  // A record taken from the spool that the buffer had no room for: offered first next time.
  #held: SpoolRecord | undefined;

  constructor(options: string | AuditSpoolOptions, hooks: AuditSpoolHooks) {
    const settings = normalizeSpoolOptions(options);
    this.#spool = Spool.open({
      ...settings,
      onDurable: hooks.onDurable,
      onFailed: hooks.onFailed,
      onSkipped: ({ file, offset, bytes }) => {
        const error = new Error(
          `The audit spool skipped ${bytes} unreadable bytes at ${offset} of ${file} (a write torn by a crash, or damage on disk).`,
        );
        queueMicrotask(() => hooks.onDamaged(error));
      },
    });
  }

  /** Appends an encoded event; false when the spool is full (drop it as `spool_full`). */
  append(body: string, bytes: number): boolean {
    return this.#spool.append(body, bytes);
  }

  /** Resolves once everything recorded so far is on disk (see {@link Spool.persisted}). */
  persisted(): Promise<boolean> {
    return this.#spool.persisted();
  }

  /** Offers durable records, oldest first, with their JSON's size, until `offer` refuses one. */
  refill(offer: (record: SpoolRecord, bytes: number) => boolean): void {
    for (;;) {
      const record = this.#held ?? this.#spool.take(1)[0];
      if (record === undefined) return;
      this.#held = record;
      if (!offer(record, record.bytes - recordHeaderBytes)) return;
      this.#held = undefined;
    }
  }

  /** The event was delivered or dropped: removes it from the spool. */
  ack(record: SpoolRecord): void {
    this.#spool.ack(record);
  }

  /** Events on disk not yet acknowledged. */
  get events(): number {
    return this.#spool.stats().events;
  }

  close(): Promise<void> {
    return this.#spool.close();
  }

  closeSync(): void {
    this.#spool.closeSync();
  }
}
