// The audit client's spool option: its public type, its defaults and its validation, once.
import { atLeastOne, duration } from "../../integration-api/client-options.ts";

/** The object form of the audit client's `spool` option. */
export interface AuditSpoolOptions {
  /** The spool directory, created if missing; one per process (a second process is refused). */
  dir: string;
  /** The most events the spool holds until they are delivered; more are dropped as `spool_full`. Default 100,000. */
  maxEvents?: number | undefined;
  /** The most bytes those events take on disk; more are dropped as `spool_full`. Default 64 MiB. */
  maxBytes?: number | undefined;
  /**
   * How long a group commit waits for more events before its one write and fsync, in
   * milliseconds. Default 0: each commit takes whatever was recorded while the previous one ran.
   */
  commitDelayMs?: number | undefined;
  /** Segment files are sealed, and deleted once delivered, past this size. Default 1 MiB. */
  segmentBytes?: number | undefined;
}

/** The spool's settings, checked once, with messages that name the option. */
export interface NormalizedSpoolOptions {
  dir: string;
  maxEvents: number;
  maxBytes: number;
  commitDelayMs: number;
  segmentBytes: number;
}

/** Validates the `spool` option: a directory path, or {@link AuditSpoolOptions}. */
export function normalizeSpoolOptions(input: string | AuditSpoolOptions): NormalizedSpoolOptions {
  const options = typeof input === "string" ? { dir: input } : input;
  if (typeof options?.dir !== "string" || options.dir === "") {
    throw new TypeError(
      'The spool option is a directory path, or an object with one: { dir: "./audit-spool" }.',
    );
  }
  return {
    dir: options.dir,
    maxEvents: atLeastOne("spool.maxEvents", options.maxEvents, 100_000),
    maxBytes: atLeastOne("spool.maxBytes", options.maxBytes, 64 * 1024 * 1024),
    commitDelayMs: duration("spool.commitDelayMs", options.commitDelayMs, 0),
    segmentBytes: atLeastOne("spool.segmentBytes", options.segmentBytes, 1024 * 1024),
  };
}
