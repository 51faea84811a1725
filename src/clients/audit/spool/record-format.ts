/**
 * The spool's segment files. A segment starts with an 8-byte magic that names the format and its
 * version, then holds records back to back, each a 4-byte little-endian length of its payload, a
 * 4-byte CRC-32 of the length bytes and the payload, and the payload (UTF-8 JSON). A record whose
 * length or checksum does not hold was torn by a crash or damaged on disk: the reader skips to the
 * next offset where a whole record checks out, so one bad record never hides the ones after it.
 * A length is checked against the bytes that follow it only: the format sets no size limit, so
 * that a record written under one `maxEventBytes` reads back under any other.
 */
export const segmentMagic = new TextEncoder().encode("PIAUDIT1");
export const recordHeaderBytes = 8;

type Crc32 = (data: Uint8Array, value?: number) => number;

/** A record read back from a segment. */
export interface DecodedRecord {
  /** Where the record starts in its segment: its identity in the ack file. */
  offset: number;
  /** Where the next record starts. */
  end: number;
  body: string;
}

/** Bytes a reader skipped because no whole record started there. */
export interface SkippedBytes {
  offset: number;
  bytes: number;
}

/** Encodes `bodies` as records into one buffer, to be written with one call. */
export function encodeRecords(
  bodies: readonly string[],
  totalBytes: number,
  crc32: Crc32,
  prefix?: Uint8Array,
): Uint8Array {
  const buffer = Buffer.allocUnsafe((prefix?.length ?? 0) + totalBytes);
  let at = 0;
  if (prefix !== undefined) {
    buffer.set(prefix, 0);
    at = prefix.length;
  }
  for (const body of bodies) {
    const length = buffer.write(body, at + recordHeaderBytes, "utf8");
    buffer.writeUInt32LE(length, at);
    const checksum = crc32(
      buffer.subarray(at + recordHeaderBytes, at + recordHeaderBytes + length),
      crc32(buffer.subarray(at, at + 4)),
    );
    buffer.writeUInt32LE(checksum, at + 4);
    at += recordHeaderBytes + length;
  }
  return buffer.subarray(0, at);
}

/**
 * Reads the record at `offset` of `buffer` (which starts at `base` in its segment). Returns the
 * record, or the bytes to skip before the next whole record when none starts there, or undefined
 * at the end of the buffer.
 */
export function decodeRecord(
  buffer: Buffer,
  offset: number,
  base: number,
  crc32: Crc32,
): DecodedRecord | SkippedBytes | undefined {
  if (offset >= buffer.length) return undefined;
  for (let at = offset; at < buffer.length; at++) {
    const end = checkRecordAt(buffer, at, crc32);
    if (end === undefined) continue;
    if (at > offset) return { offset: base + offset, bytes: at - offset };
    return {
      offset: base + at,
      end: base + end,
      body: buffer.toString("utf8", at + recordHeaderBytes, end),
    };
  }
  return { offset: base + offset, bytes: buffer.length - offset };
}

function checkRecordAt(buffer: Buffer, at: number, crc32: Crc32): number | undefined {
  if (at + recordHeaderBytes > buffer.length) return undefined;
  const length = buffer.readUInt32LE(at);
  const end = at + recordHeaderBytes + length;
  if (length === 0 || end > buffer.length) return undefined;
  const checksum = crc32(
    buffer.subarray(at + recordHeaderBytes, end),
    crc32(buffer.subarray(at, at + 4)),
  );
  return checksum === buffer.readUInt32LE(at + 4) ? end : undefined;
}

/** Whether `bytes` start with the segment magic of this format version. */
export function hasSegmentMagic(bytes: Uint8Array): boolean {
  return segmentMagic.every((byte, index) => bytes[index] === byte);
}
