/**
 * A crash-safe spool of strings on the local disk: the primitive under the audit client's `spool`
 * option, which knows nothing of delivery.
 *
 * - `append()` is synchronous and writes nothing: records wait in memory for the next commit, which
 *   writes every waiting record with one `write` and one `fdatasync` (group commit). `persisted()`
 *   resolves once the records appended before it are on disk.
 * - `take()` hands out durable records, oldest first, read back from the segment files; `ack()`
 *   marks one delivered (see segments.ts for how acknowledgements are kept and segments deleted).
 * - A failed write (a full disk: ENOSPC, EFBIG, EDQUOT) drops its records through `onFailed`; the
 *   segment is cut back to its last whole record and sealed, and the next commit starts a new one.
 * - At the process's exit, `closeSync()` writes synchronously both what waits for a commit and the
 *   commit under way, whose asynchronous write may never run (see there).
 *
 * The spool owns the accounting against its bounds, the sequence numbers `persisted()` waits on
 * and the commit cycle; segments.ts owns the files and the acknowledgements, record-format.ts the
 * bytes of a record.
 */
import { type SpoolBuiltins, spoolBuiltins } from "./node-builtins.ts";
import { encodeRecords, recordHeaderBytes, segmentMagic } from "./record-format.ts";
import { type Segment, Segments, type SpoolRecord, type SpoolSkip } from "./segments.ts";
import { acquireSpoolLock, type SpoolLock } from "./spool-lock.ts";

export type { SpoolRecord, SpoolSkip } from "./segments.ts";

/** Why a spool could not keep records: `spool_full` (its bounds, or a full disk), `spool_failed` (another I/O error). */
export type SpoolFailure = "spool_full" | "spool_failed";

/** Settings of a {@link Spool}, already validated. */
export interface SpoolSettings {
  dir: string;
  /** The most records held (on disk and waiting for a commit), not yet acknowledged. */
  maxEvents: number;
  /** The most bytes those records take on disk, record headers included. */
  maxBytes: number;
  /** A segment file is sealed, and a new one started, past this size. */
  segmentBytes: number;
  /** How long a commit waits for more records, in milliseconds (0: until the current I/O is done). */
  commitDelayMs: number;
  /** New durable records can be taken. */
  onDurable: () => void;
  /** Records that could not be written, and why: they are not on disk and never will be. */
  onFailed: (bodies: string[], reason: SpoolFailure, error: unknown) => void;
  /** Unreadable bytes found when the spool opened, each stretch reported at one open only. */
  onSkipped: (skip: SpoolSkip) => void;
}

interface Batch {
  bodies: string[];
  bytes: number;
  /** The sequence number of its last record. */
  last: number;
}

/** A commit under way: its bytes, and where in which segment they go. */
interface Write {
  batch: Batch;
  segment: Segment;
  position: number;
  data: Uint8Array;
}

interface Waiter {
  target: number;
  ok: boolean;
  resolve: (ok: boolean) => void;
}

const fullDiskCodes = new Set(["ENOSPC", "EFBIG", "EDQUOT"]);

/** The spool: see the module's comment. Open it with {@link Spool.open}. */
export class Spool {
  readonly #settings: SpoolSettings;
  readonly #node: SpoolBuiltins;
  readonly #lock: SpoolLock;
  readonly #segments: Segments;
  #pending: string[] = [];
  #pendingBytes = 0;
  readonly #pendingAcks = new Map<Segment, number[]>();
  #events = 0;
  #bytes = 0;
  // Sequence numbers of accepted records, so that each persisted() knows which ones it waits for.
  #appended = 0;
  #settled = 0;
  #durable = 0;
  #lastFailed = 0;
  // The last accepted record before the latest refusal: a refused record sits right after it.
  #lastRefusedAfter = -1;
  readonly #waiters: Waiter[] = [];
  #commitScheduled = false;
  #writing: Write | undefined;
  #closed = false;
  #released = false;

  private constructor(settings: SpoolSettings, node: SpoolBuiltins, lock: SpoolLock) {
    this.#settings = settings;
    this.#node = node;
    this.#lock = lock;
    this.#segments = new Segments(settings.dir, node);
  }

  /**
   * Opens (creating it if needed) and locks the spool directory, and reads what an earlier
   * process left in it, synchronously: this runs once, at startup.
   *
   * @throws SpoolLockedError when another process holds the directory.
   */
  static open(settings: SpoolSettings): Spool {
    const node = spoolBuiltins();
    node.fs.mkdirSync(settings.dir, { recursive: true });
    const lock = acquireSpoolLock(settings.dir, node);
    const spool = new Spool(settings, node, lock);
    try {
      const left = spool.#segments.load(settings.onSkipped);
      spool.#events = left.events;
      spool.#bytes = left.bytes;
    } catch (error) {
      lock.release();
      throw error;
    }
    if (spool.#events > 0) queueMicrotask(settings.onDurable);
    return spool;
  }

  /** Records not yet acknowledged and their bytes on disk; `pending` of them wait for a commit. */
  stats(): { events: number; bytes: number; pending: number; segments: number } {
    const { length: pending } = this.#pending;
    return { events: this.#events, bytes: this.#bytes, pending, segments: this.#segments.count };
  }

  /**
   * Queues `body` (of `bytes` UTF-8 bytes) for the next commit. Returns false, keeping nothing,
   * when it would take the spool past `maxEvents` or `maxBytes`.
   */
  append(body: string, bytes: number): boolean {
    if (this.#closed) throw new Error("The audit spool is closed.");
    const recordBytes = bytes + recordHeaderBytes;
    const { maxEvents, maxBytes } = this.#settings;
    if (this.#events >= maxEvents || this.#bytes + recordBytes > maxBytes) {
      this.#lastRefusedAfter = this.#appended;
      return false;
    }
    this.#appended++;
    this.#events++;
    this.#bytes += recordBytes;
    this.#pending.push(body);
    this.#pendingBytes += recordBytes;
    this.#scheduleCommit();
    return true;
  }

  /**
   * Resolves true once every record appended before the call is on disk. Resolves false when a
   * record was refused or not written since the last commit that succeeded before the call: a
   * conservative answer, never true for a record that is not on disk.
   */
  persisted(): Promise<boolean> {
    const ok = this.#lastFailed <= this.#durable && this.#lastRefusedAfter < this.#durable;
    const waiter = { target: this.#appended, ok } as Waiter;
    if (this.#settled >= waiter.target) return Promise.resolve(waiter.ok);
    return new Promise((resolve) => {
      waiter.resolve = resolve;
      this.#waiters.push(waiter);
    });
  }

  /** Up to `max` durable records not yet taken in this process, oldest first. */
  take(max: number): SpoolRecord[] {
    const records: SpoolRecord[] = [];
    while (records.length < max) {
      const record = this.#segments.next();
      if (record === undefined) break;
      records.push(record);
    }
    return records;
  }

  /** Marks a taken record delivered: it is never handed out again, here or after a restart. */
  ack(record: SpoolRecord): void {
    const segment = this.#segments.find(record.segment);
    if (this.#released || segment === undefined || segment.acked.has(record.offset)) return;
    segment.acked.add(record.offset);
    this.#events--;
    this.#bytes -= record.bytes;
    if (this.#segments.deleteIfDone(segment)) return;
    const acks = this.#pendingAcks.get(segment);
    if (acks === undefined) this.#pendingAcks.set(segment, [record.offset]);
    else acks.push(record.offset);
    this.#scheduleCommit();
  }

  /**
   * Commits what waits, writes the acknowledgements and releases the directory. Records not
   * acknowledged stay on disk for the next process.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#settled < this.#appended) await this.persisted();
    this.#release();
  }

  /**
   * For the process's `exit` event, where nothing asynchronous runs: writes synchronously what
   * waits for a commit and what the commit under way was writing, then releases the directory.
   *
   * The commit under way is written again, at its own offset and with its own bytes: its
   * asynchronous write may or may not have run, and if it runs now it writes the same bytes to the
   * same place. Its segment is neither sealed nor closed here, so that write can never land in
   * another file through a reused descriptor; the process's end closes it.
   */
  closeSync(): void {
    if (this.#released) return;
    this.#closed = true;
    const writing = this.#writing;
    const waiting = this.#pending.length > 0 ? this.#takePending() : undefined;
    if (writing !== undefined || waiting !== undefined) this.#writeAtExit(writing, waiting);
    this.#release(writing?.segment);
  }

  #writeAtExit(writing: Write | undefined, waiting: Batch | undefined): void {
    const { fs, crc32 } = this.#node;
    const batches = [writing?.batch, waiting].filter((batch) => batch !== undefined);
    let target: { segment: Segment; position: number } | undefined;
    try {
      let data: Uint8Array;
      if (writing === undefined) {
        const batch = waiting as Batch;
        const segment = this.#segmentFor(batch.bytes);
        target = { segment, position: segment.size };
        const prefix = segment.size === 0 ? segmentMagic : undefined;
        data = encodeRecords(batch.bodies, batch.bytes, crc32, prefix);
      } else {
        target = writing;
        const more = waiting && encodeRecords(waiting.bodies, waiting.bytes, crc32);
        data = more === undefined ? writing.data : Buffer.concat([writing.data, more]);
      }
      const fd = target.segment.writeFd as number;
      for (let done = 0; done < data.length; ) {
        done += fs.writeSync(fd, data, done, data.length - done, target.position + done);
      }
      fs.fdatasyncSync(fd);
      if (target.position === 0) this.#syncDirectory();
    } catch (error) {
      // Cut back so that no record reported as failed reappears. (Were the commit under way's
      // own write to run after this cut, its records would: a delivery of events reported
      // dropped, never a loss.)
      if (target !== undefined) this.#truncate(target.segment, target.position);
      for (const batch of batches) this.#settings.onFailed(batch.bodies, reasonOf(error), error);
    }
  }

  #release(writing?: Segment): void {
    this.#released = true;
    this.#segments.writeAcks(this.#pendingAcks);
    this.#pendingAcks.clear();
    this.#segments.closeAll(writing);
    this.#lock.release();
  }

  #scheduleCommit(): void {
    if (this.#commitScheduled || this.#writing !== undefined) return;
    this.#commitScheduled = true;
    const { commitDelayMs } = this.#settings;
    if (commitDelayMs > 0) setTimeout(() => this.#commit(), commitDelayMs);
    else setImmediate(() => this.#commit());
  }

  #takePending(): Batch {
    const batch = { bodies: this.#pending, bytes: this.#pendingBytes, last: this.#appended };
    this.#pending = [];
    this.#pendingBytes = 0;
    return batch;
  }

  #commit(): void {
    this.#commitScheduled = false;
    if (this.#released) return;
    this.#segments.writeAcks(this.#pendingAcks);
    this.#pendingAcks.clear();
    if (this.#pending.length === 0) return;
    const batch = this.#takePending();
    let segment: Segment;
    let data: Uint8Array;
    try {
      segment = this.#segmentFor(batch.bytes);
      const prefix = segment.size === 0 ? segmentMagic : undefined;
      data = encodeRecords(batch.bodies, batch.bytes, this.#node.crc32, prefix);
    } catch (error) {
      this.#settle(batch, error);
      return;
    }
    const position = segment.size;
    const fd = segment.writeFd as number;
    this.#writing = { batch, segment, position, data };
    this.#writeAll(fd, data, 0, position, (error) => {
      if (error !== null) {
        this.#cutBack(segment, position);
        return this.#settle(batch, error);
      }
      this.#node.fs.fdatasync(fd, (syncError) => {
        if (syncError !== null) {
          // What a failed fsync left on disk is unknown: the records count as not written.
          this.#cutBack(segment, position);
          return this.#settle(batch, syncError);
        }
        if (position === 0) this.#syncDirectory();
        segment.size = position + data.length;
        segment.records += batch.bodies.length;
        this.#settle(batch, undefined);
      });
    });
  }

  #writeAll(
    fd: number,
    data: Uint8Array,
    from: number,
    position: number,
    done: (error: NodeJS.ErrnoException | null) => void,
  ): void {
    this.#node.fs.write(fd, data, from, data.length - from, position + from, (error, written) => {
      if (error !== null || from + written >= data.length) return done(error);
      this.#writeAll(fd, data, from + written, position, done);
    });
  }

  #settle(batch: Batch, error: unknown): void {
    const first = batch.last - batch.bodies.length + 1;
    if (error === undefined) {
      this.#durable = batch.last;
    } else {
      this.#events -= batch.bodies.length;
      this.#bytes -= batch.bytes;
      this.#lastFailed = batch.last;
      for (const waiter of this.#waiters) if (waiter.target >= first) waiter.ok = false;
    }
    this.#settled = batch.last;
    this.#writing = undefined;
    while ((this.#waiters[0]?.target ?? Number.POSITIVE_INFINITY) <= this.#settled) {
      const waiter = this.#waiters.shift() as Waiter;
      waiter.resolve(waiter.ok);
    }
    if (this.#pending.length > 0 || this.#pendingAcks.size > 0) this.#scheduleCommit();
    if (error === undefined) this.#settings.onDurable();
    else this.#settings.onFailed(batch.bodies, reasonOf(error), error);
  }

  /** The open segment if `bytes` more fit in it, else a new one. */
  #segmentFor(bytes: number): Segment {
    const open = this.#segments.open();
    if (
      open !== undefined &&
      (open.size === 0 || open.size + bytes <= this.#settings.segmentBytes)
    ) {
      return open;
    }
    if (open !== undefined) this.#segments.seal(open);
    return this.#segments.create();
  }

  /** After a failed write: the segment keeps its whole records and takes no more. */
  #cutBack(segment: Segment, size: number): void {
    this.#truncate(segment, size);
    this.#segments.seal(segment);
  }

  #truncate(segment: Segment, size: number): void {
    try {
      this.#node.fs.ftruncateSync(segment.writeFd as number, size);
    } catch {
      // The torn tail stays; a reader skips it by its checksum.
    }
  }

  /** Makes a new segment's directory entry durable, where the platform allows it. */
  #syncDirectory(): void {
    const { fs } = this.#node;
    try {
      const fd = fs.openSync(this.#settings.dir, "r");
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // Windows cannot open a directory; its file systems order the entry with the data.
    }
  }
}

function reasonOf(error: unknown): SpoolFailure {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "";
  return fullDiskCodes.has(code) ? "spool_full" : "spool_failed";
}
