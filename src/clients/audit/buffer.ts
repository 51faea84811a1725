// The bounded first-in first-out buffer under the audit queue (audit-queue.ts extends it): its
// bounds by count and bytes over queued and in-flight entries, its busy and idle transitions,
// and the waits for idle that flush() and close() use.
import { maxTimerMs } from "../integration-api/timers.ts";
import { RingQueue } from "./ring-queue.ts";

/** An item held by a {@link BoundedBuffer}, with the size it was admitted with. */
export interface BufferEntry<Item> {
  readonly item: Item;
  /** The size counted against `maxBytes` while the entry is held. */
  readonly bytes: number;
}

/** Bounds and hooks of a {@link BoundedBuffer}. */
export interface BoundedBufferOptions {
  /** The most entries held, queued and in flight together. */
  maxItems: number;
  /** The most bytes held, queued and in flight together. */
  maxBytes: number;
  /** Called when the buffer stops being empty. */
  onBusy?: (() => void) | undefined;
  /** Called when the buffer becomes empty again (nothing queued, nothing in flight). */
  onIdle?: (() => void) | undefined;
}

/** How long {@link BoundedBuffer.whenIdle} waits. */
export interface WaitOptions {
  /** In milliseconds; Infinity waits for ever. */
  timeoutMs: number;
  /** Stops waiting early (the promise then resolves false). */
  signal?: AbortSignal | undefined;
}

/**
 * A bounded first-in first-out buffer of work, in the spirit of Sentry's promise buffer: entries
 * are queued, taken into flight, and settled; the bounds count both queued and in-flight entries,
 * so that work being retried still holds its memory. It knows nothing of delivery: a policy on
 * top decides what to take, when to settle and what to drop.
 */
export class BoundedBuffer<Item> {
  readonly #queue = new RingQueue<BufferEntry<Item>>();
  readonly #inFlight = new Set<BufferEntry<Item>>();
  readonly #idleWaiters = new Set<(idle: boolean) => void>();
  readonly #options: BoundedBufferOptions;
  #bytes = 0;
  // Between onBusy and onIdle: a refill while settling the last entry is no transition.
  #busy = false;

  constructor(options: BoundedBufferOptions) {
    this.#options = options;
  }

  /** Entries waiting to be taken. */
  get queued(): number {
    return this.#queue.size;
  }

  /** Entries taken and not yet settled. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Bytes held by queued and in-flight entries. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Whether nothing is queued and nothing is in flight. */
  get isIdle(): boolean {
    return this.#queue.size === 0 && this.#inFlight.size === 0;
  }

  /**
   * Queues `item`, counted as `bytes`. Returns false, holding nothing, when it would take the
   * buffer past either bound.
   */
  offer(item: Item, bytes: number): boolean {
    const held = this.#queue.size + this.#inFlight.size;
    if (held >= this.#options.maxItems || this.#bytes + bytes > this.#options.maxBytes) {
      return false;
    }
    this.#push(item, bytes);
    return true;
  }

  /**
   * Queues `item` whatever its size, when the buffer holds nothing: an item larger than
   * `maxBytes` then goes through on its own instead of waiting for ever. Returns false otherwise.
   */
  offerAlone(item: Item, bytes: number): boolean {
    if (!this.isIdle) return false;
    this.#push(item, bytes);
    return true;
  }

  /** Moves the oldest queued entry into flight and returns it; undefined when none is queued. */
  take(): BufferEntry<Item> | undefined {
    const entry = this.#queue.shift();
    if (entry !== undefined) this.#inFlight.add(entry);
    return entry;
  }

  /** Puts an in-flight entry back at the end of the queue, still counted. */
  requeue(entry: BufferEntry<Item>): void {
    if (this.#inFlight.delete(entry)) this.#queue.push(entry);
  }

  /**
   * Releases an in-flight entry (delivered or dropped), waking idle waiters if it was the last;
   * false, changing nothing, when it was not in flight (settled or drained already). `refill`
   * runs once the entry's room is free and before that check: what it offers keeps the buffer
   * from looking idle.
   */
  settle(entry: BufferEntry<Item>, refill?: () => void): boolean {
    if (!this.#inFlight.delete(entry)) return false;
    this.#bytes -= entry.bytes;
    refill?.();
    this.#checkIdle();
    return true;
  }

  /** Removes and returns every queued entry (not those in flight), oldest first, releasing them. */
  drainQueued(): Item[] {
    const entries = this.#queue.drain();
    for (const entry of entries) this.#bytes -= entry.bytes;
    this.#checkIdle();
    return entries.map((entry) => entry.item);
  }

  /**
   * Removes and returns every in-flight entry's item, releasing them: work given up on, whose
   * later settling then changes nothing.
   */
  drainInFlight(): Item[] {
    const entries = [...this.#inFlight];
    this.#inFlight.clear();
    for (const entry of entries) this.#bytes -= entry.bytes;
    this.#checkIdle();
    return entries.map((entry) => entry.item);
  }

  /** Every item held, in flight first, then queued; the buffer is left unchanged. */
  snapshot(): Item[] {
    return [...this.#inFlight, ...this.#queue.toArray()].map((entry) => entry.item);
  }

  /**
   * Resolves true once the buffer is empty (entries added meanwhile included), false when the
   * time is up or the signal aborts first; never rejects.
   */
  whenIdle({ timeoutMs, signal }: WaitOptions): Promise<boolean> {
    if (this.isIdle) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (idle: boolean) => {
        this.#idleWaiters.delete(finish);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(idle);
      };
      const onAbort = () => finish(false);
      // Not unref'd: whoever awaits the buffer wants the process to wait for it.
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(finish, Math.min(timeoutMs, maxTimerMs), false)
        : undefined;
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#idleWaiters.add(finish);
    });
  }

  /** Resolves every pending {@link whenIdle} with false now, e.g. when work cannot go on. */
  releaseWaiters(): void {
    for (const finish of [...this.#idleWaiters]) finish(false);
  }

  #push(item: Item, bytes: number): void {
    this.#queue.push({ item, bytes });
    this.#bytes += bytes;
    if (!this.#busy) {
      this.#busy = true;
      this.#options.onBusy?.();
    }
  }

  #checkIdle(): void {
    if (!this.isIdle) return;
    if (this.#busy) {
      this.#busy = false;
      this.#options.onIdle?.();
    }
    for (const finish of [...this.#idleWaiters]) finish(true);
  }
}
