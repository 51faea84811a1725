// The spool's segment files (see Segments): which exist, the cursor that reads them back in
// order, the acknowledgements kept beside each, and the deletion of a segment once all of it is
// delivered. The bytes inside a segment are record-format.ts's; the commit cycle is spool.ts's.
import type { SpoolBuiltins } from "./node-builtins.ts";
import { decodeRecord, hasSegmentMagic, segmentMagic } from "./record-format.ts";

/** Bytes of a segment that hold no readable record (a torn write, or damage on disk), skipped. */
export interface SpoolSkip {
  /** The segment file. */
  file: string;
  offset: number;
  bytes: number;
}

/** A record handed out by the reader, to be acknowledged once delivered. */
export interface SpoolRecord {
  readonly body: string;
  readonly segment: bigint;
  readonly offset: number;
  /** Bytes on disk, header included. */
  readonly bytes: number;
}

/** One segment file and what is known of it. */
export interface Segment {
  /** Its number, exact whatever its size (a file name's digits). */
  id: bigint;
  file: string;
  /** Bytes known to be whole on disk: what a commit made durable, or the file's size at open. */
  size: number;
  /** Records in the file (those skipped as damaged excluded). */
  records: number;
  /** Offsets of acknowledged records. */
  acked: Set<number>;
  /** Takes no more records. The newest segment is open until it fills up or a write fails. */
  sealed: boolean;
  writeFd?: number | undefined;
  ackFd?: number | undefined;
}

interface Cursor {
  segment: Segment;
  buffer: Buffer;
  /** Where `buffer` starts in the segment. */
  base: number;
  position: number;
}

// Exactly sixteen digits, the spool's own names: ids are compared as exact integers (BigInt), so
// that a stray file whose id is above 2^53 cannot make every new segment reuse one id, and a file
// of another width (17 digits with a leading zero, 251 nines) is not the spool's: it is left alone,
// rather than read under a name it does not have or numbered past into names too long to create.
const segmentName = /^(\d{16})\.(seg|ack)$/;
/** The last id a sixteen-digit name holds. */
const lastSegmentId = 10n ** 16n - 1n;
const emptyBuffer = Buffer.alloc(0);

/**
 * The segment files of a spool directory, oldest first: loading them at open, creating, reading
 * back in order, recording acknowledgements, and deleting a sealed segment once every record in
 * it is acknowledged.
 *
 * A segment's acknowledgements are offsets, which mean something only in that segment's file: a
 * segment id is therefore never used twice, not even after a crash between the two unlinks of a
 * delivered segment (`.seg`, then `.ack`) left its `.ack` behind. New ids start past every `.seg`
 * and `.ack` found at open, and such an orphaned `.ack` is deleted then.
 *
 * Reading back checks each record's length against its segment and its checksum only, never
 * against the size limit of the process recording now: a record written whole by an earlier
 * process, under other options, is read whole.
 */
export class Segments {
  readonly #node: SpoolBuiltins;
  readonly #dir: string;
  readonly #list: Segment[] = [];
  #lastId = 0n;
  #cursor: Cursor | undefined;

  constructor(dir: string, node: SpoolBuiltins) {
    this.#dir = dir;
    this.#node = node;
  }

  get count(): number {
    return this.#list.length;
  }

  /**
   * Reads every segment an earlier process left, checking each record, and returns the records
   * and bytes not acknowledged. Each stretch of unreadable bytes is passed to `onSkipped` once:
   * its mark is then written to the segment's ack file, where a later open finds it reported.
   *
   * @throws Error when a segment file was written by another format version.
   */
  load(onSkipped: (skip: SpoolSkip) => void): { events: number; bytes: number } {
    const { fs, path } = this.#node;
    const unacked = { events: 0, bytes: 0 };
    const found = new Map<bigint, Set<string>>();
    for (const name of fs.readdirSync(this.#dir)) {
      const [, id, kind] = segmentName.exec(name) ?? [];
      if (id === undefined || kind === undefined) continue;
      const kinds = found.get(BigInt(id)) ?? new Set();
      found.set(BigInt(id), kinds.add(kind));
    }
    if ([...found.keys()].includes(lastSegmentId)) {
      // No spool numbers that far (a segment a millisecond for 300,000 years): a stray file.
      throw new Error(
        `The audit spool ${this.#dir} holds ${segmentFile(lastSegmentId)}, the last id a segment name can hold, so no segment can follow it: move that file away`,
      );
    }
    for (const id of [...found.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      this.#lastId = id;
      const file = path.join(this.#dir, segmentFile(id));
      // The .seg was deleted, and the process died before its .ack went too.
      if (!found.get(id)?.has("seg")) {
        fs.rmSync(ackFile(file), { force: true });
        continue;
      }
      const data = fs.readFileSync(file);
      const acked = this.#readAcks(file);
      const segment: Segment = { id, file, size: data.length, records: 0, acked, sealed: true };
      this.#list.push(segment);
      const readable = new Set<number>();
      const skipped: number[] = [];
      const report = (skip: SpoolSkip) => {
        const mark = damageMark(skip.offset);
        if (acked.has(mark)) return; // reported by an earlier open
        skipped.push(mark);
        onSkipped(skip);
      };
      for (const record of this.#records(file, data, report)) {
        readable.add(record.offset);
        if (!acked.has(record.offset)) {
          unacked.events++;
          unacked.bytes += record.end - record.offset;
        }
      }
      segment.records = readable.size;
      // Only acknowledgements of readable records count towards deleting the segment.
      segment.acked = new Set([...acked].filter((offset) => readable.has(offset)));
      if (!this.deleteIfDone(segment) && skipped.length > 0) {
        this.writeAcks(new Map([[segment, skipped]]));
      }
    }
    return unacked;
  }

  /** The whole records of a segment's `data`, reporting each unreadable stretch. */
  *#records(
    file: string,
    data: Buffer,
    onSkipped: (skip: SpoolSkip) => void,
  ): Generator<{ offset: number; end: number }> {
    // Created, then the process died before its first commit wrote a byte, or all of the magic.
    if (data.length < segmentMagic.length) {
      if (data.length > 0) onSkipped({ file, offset: 0, bytes: data.length });
      return;
    }
    if (!hasSegmentMagic(data)) {
      // Zeros where the first commit should be: a power loss before that commit's fdatasync.
      if (!data.subarray(0, segmentMagic.length).every((byte) => byte === 0)) {
        throw new Error(
          `${file} is not an audit spool segment of this version of platform-integration: move it out of ${this.#dir}, or open the spool with the version that wrote it.`,
        );
      }
      onSkipped({ file, offset: 0, bytes: data.length });
      return;
    }
    for (let position = segmentMagic.length; position < data.length; ) {
      const found = decodeRecord(data, position, 0, this.#node.crc32);
      if (found === undefined) return;
      if ("body" in found) {
        yield found;
        position = found.end;
      } else {
        onSkipped({ file, offset: found.offset, bytes: found.bytes });
        position += found.bytes;
      }
    }
  }

  /** The newest segment, when it still takes records. */
  open(): Segment | undefined {
    const newest = this.#list.at(-1);
    return newest?.sealed === false ? newest : undefined;
  }

  /** Starts a new segment after every existing one. */
  create(): Segment {
    const id = ++this.#lastId;
    const file = this.#node.path.join(this.#dir, segmentFile(id));
    const writeFd = this.#node.fs.openSync(file, "wx+");
    const segment: Segment = {
      id,
      file,
      size: 0,
      records: 0,
      acked: new Set(),
      sealed: false,
      writeFd,
    };
    this.#list.push(segment);
    return segment;
  }

  find(id: bigint): Segment | undefined {
    return this.#list.find((segment) => segment.id === id);
  }

  seal(segment: Segment): void {
    if (segment.sealed) return;
    segment.sealed = true;
    this.deleteIfDone(segment);
  }

  /** Deletes a sealed segment whose records are all acknowledged; true if it did. */
  deleteIfDone(segment: Segment): boolean {
    if (!segment.sealed || segment.acked.size < segment.records) return false;
    const { fs } = this.#node;
    this.#closeFds(segment);
    fs.rmSync(segment.file, { force: true });
    fs.rmSync(ackFile(segment.file), { force: true });
    this.#list.splice(this.#list.indexOf(segment), 1);
    return true;
  }

  /**
   * Appends acknowledged offsets to each segment's ack file, without an fsync: an
   * acknowledgement lost to a power cut only means that record is sent again.
   */
  writeAcks(acks: Map<Segment, number[]>): void {
    for (const [segment, offsets] of acks) {
      if (!this.#list.includes(segment)) continue;
      const data = Buffer.allocUnsafe(offsets.length * 4);
      for (const [index, offset] of offsets.entries()) data.writeUInt32LE(offset, index * 4);
      try {
        segment.ackFd ??= this.#node.fs.openSync(ackFile(segment.file), "a");
        this.#node.fs.writeSync(segment.ackFd, data);
      } catch {
        // Same as a lost acknowledgement: those records are sent again after a restart.
      }
    }
  }

  /** Closes every file, except the write descriptor of `writing`, which a write may still use. */
  closeAll(writing?: Segment): void {
    for (const segment of this.#list) {
      if (segment === writing) {
        if (segment.ackFd !== undefined) this.#node.fs.closeSync(segment.ackFd);
        segment.ackFd = undefined;
      } else this.#closeFds(segment);
    }
  }

  /** The next durable record not yet handed out in this process, oldest first. */
  next(): SpoolRecord | undefined {
    for (;;) {
      const cursor = this.#cursor ?? this.#startCursor(this.#list[0]);
      if (cursor === undefined) return undefined;
      const { buffer, position, base } = cursor;
      const found = decodeRecord(buffer, position, base, this.#node.crc32);
      if (found === undefined) {
        if (!this.#advance(cursor)) return undefined;
      } else if (!("body" in found)) {
        // Reported at load; records written by this process are never torn.
        cursor.position += found.bytes;
      } else {
        cursor.position = found.end - base;
        if (!cursor.segment.acked.has(found.offset)) {
          const { body, offset, end } = found;
          return { body, segment: cursor.segment.id, offset, bytes: end - offset };
        }
      }
    }
  }

  #startCursor(segment: Segment | undefined): Cursor | undefined {
    if (segment === undefined) return undefined;
    this.#cursor = { segment, buffer: emptyBuffer, base: segmentMagic.length, position: 0 };
    return this.#cursor;
  }

  /** Reads the rest of the cursor's segment, or moves to the next; false when caught up. */
  #advance(cursor: Cursor): boolean {
    const { segment } = cursor;
    const from = cursor.base + cursor.buffer.length;
    if (from < segment.size && this.#list.includes(segment)) {
      cursor.buffer = this.#read(segment, from);
      cursor.base = from;
      cursor.position = 0;
      return cursor.buffer.length > 0;
    }
    if (!segment.sealed) return false;
    const next = this.#list.find((each) => each.id > segment.id);
    return this.#startCursor(next) !== undefined;
  }

  #read(segment: Segment, from: number): Buffer {
    const { fs } = this.#node;
    const buffer = Buffer.allocUnsafe(segment.size - from);
    const fd = segment.writeFd ?? fs.openSync(segment.file, "r");
    try {
      return buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, from));
    } finally {
      if (fd !== segment.writeFd) fs.closeSync(fd);
    }
  }

  #readAcks(segmentPath: string): Set<number> {
    const acked = new Set<number>();
    try {
      const data = this.#node.fs.readFileSync(ackFile(segmentPath));
      // A torn last entry (fewer than 4 bytes) is ignored: that record is sent again.
      for (let at = 0; at + 4 <= data.length; at += 4) acked.add(data.readUInt32LE(at));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    return acked;
  }

  #closeFds(segment: Segment): void {
    for (const fd of [segment.writeFd, segment.ackFd])
      if (fd !== undefined) this.#node.fs.closeSync(fd);
    segment.writeFd = undefined;
    segment.ackFd = undefined;
  }
}

/**
 * How an ack file marks an unreadable stretch as reported: its offset with the top bit set, which
 * no record's offset has (the ack file's offsets are 32 bits; segments stay far below 2 GiB).
 */
function damageMark(offset: number): number {
  return (offset | 0x8000_0000) >>> 0;
}

function segmentFile(id: bigint): string {
  return `${String(id).padStart(16, "0")}.seg`;
}

function ackFile(segmentPath: string): string {
  return segmentPath.replace(/\.seg$/, ".ack");
}
