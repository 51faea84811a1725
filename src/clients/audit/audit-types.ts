// The Audit client's public types: its options, its drop reasons (with their one list), its
// stats and its methods. No code but the list of reasons.
import type { CallOptions, IntegrationApiOptions } from "../integration-api/client-options.ts";
import type { Capabilities } from "../sdk-api/api-selection.ts";
import type { AuditEvent } from "./audit-event.ts";
import type { AuditSpoolOptions } from "./spool/spool-options.ts";

/**
 * Why events were dropped: `overflow` (the queue was full), `rejected` (the API refused the event
 * with a 4xx that retrying cannot change), `redirected` (the API kept answering with a redirect,
 * which is never followed), `configuration` (held back by a configuration error when the client
 * closed or the process exited), `closed` (recorded after `close()`, or still queued when it
 * timed out), `exit` (still queued when the process exited); with a spool, `spool_full` (past its
 * bounds, or the disk is full: ENOSPC, EFBIG, EDQUOT), `spool_failed` (another write error) and
 * `spool_damaged` (unreadable bytes found in the spool at start: a write torn by a crash, or
 * damage on disk; its events cannot be read, so `events` is empty and each stretch counts one).
 */
export type AuditDropReason =
  | "overflow"
  | "rejected"
  | "redirected"
  | "configuration"
  | "closed"
  | "exit"
  | "spool_full"
  | "spool_failed"
  | "spool_damaged";

// A Record literal must name every reason, and no other: the list cannot fall behind the type.
const everyReason: Record<AuditDropReason, true> = {
  overflow: true,
  rejected: true,
  redirected: true,
  configuration: true,
  closed: true,
  exit: true,
  spool_full: true,
  spool_failed: true,
  spool_damaged: true,
};

/** Every {@link AuditDropReason}, in the order `stats().droppedByReason` lists them. */
export const auditDropReasons = Object.keys(everyReason) as readonly AuditDropReason[];

/** A report of dropped events, passed to `onDrop`. */
export interface AuditDrop<Action extends string = string> {
  reason: AuditDropReason;
  /** How many events this report covers (for `spool_damaged`, one per unreadable stretch). */
  count: number;
  /** The dropped events, for a fallback log (none for `spool_damaged`: they cannot be read). */
  events: AuditEvent<Action>[];
  /** The error that caused the drop, for `rejected`, `redirected` and `configuration`. */
  error?: unknown;
}

/** Options of `createAuditClient`. */
export interface AuditClientOptions<Action extends string = string>
  extends Omit<IntegrationApiOptions, "totalTimeoutMs"> {
  /** The catalogue from `defineAuditActions`: events must then use one of its actions. */
  actions?: Readonly<Record<string, Action>> | undefined;
  /**
   * Keep events in a crash-safe spool on the local disk until the API answers 2xx: a directory
   * path, or {@link AuditSpoolOptions}. Each event is written (group commit: one fsync for all
   * events recorded meanwhile) before it is sent, and an event left by an earlier process is sent
   * on start, in order. One process per directory: a second is refused (`SpoolLockedError`).
   * Node, Bun and Deno only. Default: no spool (events live in memory).
   */
  spool?: string | AuditSpoolOptions | undefined;
  /** How many events are sent at once, over keep-alive connections. Default 4. */
  concurrency?: number | undefined;
  /** The most events the queue holds (in flight included); more are dropped as `overflow`. Default 10,000. */
  maxQueueEvents?: number | undefined;
  /** The most bytes of JSON the queue holds (in flight included). Default 8 MiB. */
  maxQueueBytes?: number | undefined;
  /** The largest event, in bytes of JSON; a larger one makes `record()` and `send()` throw. Default 16 KiB. */
  maxEventBytes?: number | undefined;
  /** How long `flush()` and `close()` wait by default, in milliseconds. Default 10,000. */
  flushTimeoutMs?: number | undefined;
  /**
   * Closes the client (flushing, up to `flushTimeoutMs`) when the event loop empties with events
   * still queued (Node's `beforeExit`). Default false.
   */
  flushOnExit?: boolean | undefined;
  /**
   * For serverless runtimes, which freeze a function once it has answered: called with a promise
   * that settles when the queue is empty, each time it stops being empty. Pass Vercel's
   * `waitUntil`, or `waitUntil` from "cloudflare:workers".
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * The application's own audit sink (its log, database or SIEM), called with each event in
   * place of the platform's Audit API: for the newer install methods, which have none. Each
   * event is validated as for the API, then passed once; a sink that throws or rejects drops
   * that event as `rejected` (reported to `onDrop`). `flush()` and `close()` wait for the
   * promises it returns; `send()` awaits it and rethrows its error. As with the API, at most
   * `maxQueueEvents` / `maxQueueBytes` wait on it (more are `overflow`), what it still holds
   * when `close()` gives up is dropped as `closed` and at process exit as `exit`, and
   * `flushOnExit` and `waitUntil` apply. The API's own options (`baseUrl`, `tls`, `spool`...)
   * are then unused.
   */
  sink?: ((event: AuditEvent<Action>) => void | Promise<void>) | undefined;
  /** Called with every drop. Default: a warning through `logger`. */
  onDrop?: ((drop: AuditDrop<Action>) => void) | undefined;
  /**
   * Called with every failed delivery attempt that will be retried, for metrics and alerts, and
   * once with the `ConfigurationError` that stops delivery (an untrusted certificate, `tls` with
   * an `http:` URL, no base URL). Default: logs that configuration error once at error level
   * through `logger`, and each retried failure at debug level.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** Options of `flush()` and `close()`. */
export interface FlushOptions {
  /** How long to wait, in milliseconds (Infinity: no limit). Default: the client's `flushTimeoutMs`. */
  timeoutMs?: number | undefined;
  /** Stops waiting (the promise resolves false); delivery goes on. */
  signal?: AbortSignal | undefined;
}

/** Counters for health checks and metrics. */
export interface AuditStats {
  /** Events waiting to be sent. */
  queued: number;
  /** Events being sent now, or waiting to be retried. */
  inFlight: number;
  /** Bytes of JSON held by queued and in-flight events. */
  bytes: number;
  /** Events the API accepted since the client was created. */
  delivered: number;
  /** Events dropped since the client was created (each was reported to `onDrop`). */
  dropped: number;
  /** With a spool: events on disk not yet delivered (queued and in flight included). */
  spooled?: number;
  /** `dropped`, by reason. */
  droppedByReason: Record<AuditDropReason, number>;
  /** Delivery attempts that failed and were retried (each was reported to `onError`). */
  retried: number;
  /** The last failed delivery attempt: its message and when (ISO 8601); cleared by nothing. */
  lastError?: { message: string; at: string };
  /**
   * Present once a configuration error stopped delivery: its message, which names the fix.
   * Events are then kept (bounded) until `close()` or exit drops them as `configuration`.
   */
  configurationError?: string;
}

/** The Audit API: write events to the platform's audit log. */
export interface AuditClient<Action extends string = string> {
  /**
   * What this install's API can serve: audit events go to the Integration API only. On a newer
   * install (no `baseUrl` and PLATFORM_INTEGRATIONAPI unset, whatever PLATFORM_SDK_API: the
   * Version client's rule, read at construction) `audit` is false: there is no Audit API there,
   * the client says so once at construction, naming both variables, and without a
   * `sink` every event is dropped at once as `configuration` (reported to `onDrop`), never held
   * until `close()`.
   */
  readonly capabilities: Readonly<Capabilities>;
  /**
   * Queues an event and returns at once; it is sent in the background and retried until it is
   * delivered. Never throws for a delivery failure: drops reach `onDrop`.
   *
   * @throws TypeError or RangeError when the event itself is invalid or too large.
   */
  record(event: AuditEvent<Action>): void;
  /**
   * With a spool, resolves true once every event recorded so far is on disk (it then survives a
   * crash), or false when one recorded since the last successful write was dropped instead
   * (`spool_full`, `spool_failed`: see `onDrop`). Without a spool, resolves false at once.
   */
  persisted(): Promise<boolean>;
  /** Sends one event now, without the queue and without retries; resolves on any 2xx. */
  send(event: AuditEvent<Action>, options?: CallOptions): Promise<void>;
  /**
   * Waits until every event recorded so far, and any recorded meanwhile, is delivered or
   * dropped. Resolves true when the queue emptied; false on timeout, on abort, or at once while
   * a configuration error stops delivery. Never rejects.
   */
  flush(options?: FlushOptions): Promise<boolean>;
  /**
   * Stops accepting events (later ones are dropped as `closed`) and flushes. Events still queued
   * when the flush times out are dropped as `closed` (as `configuration` when a configuration
   * error held them back). Resolves like `flush()`.
   */
  close(options?: FlushOptions): Promise<boolean>;
  /** The queue's counters now, for health checks and metrics. */
  stats(): AuditStats;
}
