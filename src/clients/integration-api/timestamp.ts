// A timestamp read losslessly from the wire: the text as sent, and its instant when it has one.
const pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})?$/;

/**
 * A platform timestamp, kept lossless. The platform sends ISO 8601 UTC with seven fractional
 * digits (`2015-12-01T00:00:00.0000000Z`); a Date keeps three. `text` is the string as received,
 * `epochNanoseconds` the exact instant, `toDate()` a Date for display.
 *
 * @example
 * ```ts
 * const { releaseDate, installDate } = await version.current();
 * if (releaseDate.compare(installDate) > 0) console.log("released after install");
 * console.log(releaseDate.text, releaseDate.toDate().toLocaleString());
 * ```
 */
export class Timestamp {
  /** The timestamp exactly as the platform sent it; also what `toString()` and JSON give. */
  readonly text: string;
  /** Nanoseconds since 1970-01-01T00:00:00Z, at full precision. */
  readonly epochNanoseconds: bigint;

  private constructor(text: string, epochNanoseconds: bigint) {
    this.text = text;
    this.epochNanoseconds = epochNanoseconds;
  }

  /**
   * Reads an ISO 8601 date-time with up to nine fractional digits. `Z` or an offset gives the
   * zone; a missing zone means UTC (the platform's timestamps are UTC, and .NET omits the `Z`).
   *
   * @throws RangeError when `text` is not such a date-time or names an impossible date.
   */
  static parse(text: string): Timestamp {
    const match = pattern.exec(text);
    const fields = match?.slice(1, 7).map(Number);
    if (match === null || fields === undefined) {
      throw new RangeError(`Not an ISO 8601 date-time: ${JSON.stringify(text)}`);
    }
    const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = fields;
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(hour, minute, second);
    // Date rolls 31 April over to 1 May: the round trip rejects dates that do not exist.
    if (
      date.getUTCMonth() !== month - 1 ||
      date.getUTCDate() !== day ||
      hour > 23 ||
      minute > 59 ||
      second > 59
    ) {
      throw new RangeError(`Not a valid date-time: ${JSON.stringify(text)}`);
    }
    const zone = match[8] ?? "Z";
    const offsetMinutes =
      zone.toUpperCase() === "Z"
        ? 0
        : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)));
    const epochSeconds = BigInt(date.getTime() / 1000 - offsetMinutes * 60);
    const fraction = BigInt((match[7] ?? "").padEnd(9, "0"));
    return new Timestamp(text, epochSeconds * 1_000_000_000n + fraction);
  }

  /** Orders two timestamps at full precision: negative, zero or positive, as for `Array#sort`. */
  static compare(left: Timestamp, right: Timestamp): number {
    return left.epochNanoseconds < right.epochNanoseconds
      ? -1
      : left.epochNanoseconds > right.epochNanoseconds
        ? 1
        : 0;
  }

  /** Negative when this is earlier than `other`, zero when the same instant, positive when later. */
  compare(other: Timestamp): number {
    return Timestamp.compare(this, other);
  }

  /** Whether both name the same instant, to the nanosecond (whatever their zones or digits). */
  equals(other: Timestamp): boolean {
    return this.epochNanoseconds === other.epochNanoseconds;
  }

  /** The instant as a Date, truncated to the millisecond. */
  toDate(): Date {
    const nanoseconds = this.epochNanoseconds;
    const milliseconds = nanoseconds / 1_000_000n;
    // BigInt division truncates toward zero; before 1970 the floor is one millisecond earlier.
    return new Date(
      Number(milliseconds * 1_000_000n > nanoseconds ? milliseconds - 1n : milliseconds),
    );
  }

  /** The text as received, so that templates and logs show what the platform sent. */
  toString(): string {
    return this.text;
  }

  /** The text as received, so that JSON.stringify round-trips it unchanged. */
  toJSON(): string {
    return this.text;
  }
}
