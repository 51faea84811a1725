import {
  isConfigurationError,
  isHttpError,
  isNetworkError,
  isTimeoutError,
} from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import {
  type CallOptions,
  count,
  duration,
  type IntegrationApiOptions,
  type RetryOptions,
} from "../integration-api/options.ts";
import { sleep } from "../integration-api/timers.ts";
import { type AuditEvent, decodeAuditEvent, encodeAuditEvent, utf8Length } from "./audit-event.ts";
import { type ExitParticipant, unwatchExit, watchExit } from "./exit-hooks.ts";
import { RingQueue } from "./ring-queue.ts";

/**
 * Why events were dropped: `overflow` (the queue was full), `rejected` (the API refused the event
 * with a 4xx that retrying cannot change), `failed` (no request can succeed: no base URL),
 * `closed` (recorded after `close()`, or still queued when it timed out), `exit` (still queued
 * when the process exited).
 */
export type AuditDropReason = "overflow" | "rejected" | "failed" | "closed" | "exit";

/** A report of dropped events, passed to `onDrop`. */
export interface AuditDrop<Action extends string = string> {
  reason: AuditDropReason;
  /** How many events this report covers. */
  count: number;
  /** The dropped events, for a fallback log. */
  events: AuditEvent<Action>[];
  /** The error that caused the drop, for `rejected` and `failed`. */
  error?: unknown;
}

/** Options of {@link createAuditClient}. */
export interface AuditClientOptions<Action extends string = string>
  extends Omit<IntegrationApiOptions, "retry" | "totalTimeoutMs"> {
  /** Backoff between delivery attempts; queued events are retried until delivered, never given up. */
  retry?: Omit<RetryOptions, "limit"> | undefined;
  /** The catalogue from `defineAuditActions`: events must then use one of its actions. */
  actions?: Readonly<Record<string, Action>> | undefined;
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
  /** Called with every drop. Default: a console warning. */
  onDrop?: ((drop: AuditDrop<Action>) => void) | undefined;
  /** Called with every failed delivery attempt that will be retried: for metrics and alerts. */
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
}

/** The Audit API: write events to the platform's audit log. */
export interface AuditClient<Action extends string = string> {
  /**
   * Queues an event and returns at once; it is sent in the background and retried until it is
   * delivered. Never throws for a delivery failure: drops reach `onDrop`.
   *
   * @throws TypeError or RangeError when the event itself is invalid or too large.
   */
  record(event: AuditEvent<Action>): void;
  /** Sends one event now, without the queue and without retries; resolves on any 2xx. */
  send(event: AuditEvent<Action>, options?: CallOptions): Promise<void>;
  /**
   * Waits until every event recorded so far, and any recorded meanwhile, is delivered or
   * dropped. Resolves true when the queue emptied, false on timeout or abort; never rejects.
   */
  flush(options?: FlushOptions): Promise<boolean>;
  /**
   * Stops accepting events (later ones are dropped as `closed`) and flushes. Events still queued
   * when the flush times out are dropped as `closed`. Resolves like `flush()`.
   */
  close(options?: FlushOptions): Promise<boolean>;
  /** The queue's counters now, for health checks and metrics. */
  stats(): AuditStats;
}

const eventPath = "/audit/v1/event";

/**
 * Creates a client of the platform's Audit API (on Node, Bun, Deno and Workers). `record()` is
 * the call for request handlers: it costs well under a microsecond and never waits for the
 * network. The queue is bounded by count and bytes; every drop is reported.
 *
 * @example
 * ```ts
 * import { clientIp, createAuditClient, defineAuditActions } from "platform-integration/audit";
 *
 * const actions = defineAuditActions({ userLogin: "user.login.success" });
 * const audit = createAuditClient({ actions, tls: { rejectUnauthorized: false }, flushOnExit: true });
 * audit.record({ action: actions.userLogin, name: "user.login", ipAddress: clientIp(req) });
 * ```
 */
export function createAuditClient<Action extends string = string>(
  options: AuditClientOptions<Action> = {},
): AuditClient<Action> {
  const api = createIntegrationApi(options);
  const { retry } = api.options;
  const actions =
    options.actions === undefined ? undefined : new Set<string>(Object.values(options.actions));
  const concurrency = atLeastOne("concurrency", options.concurrency, 4);
  const maxQueueEvents = atLeastOne("maxQueueEvents", options.maxQueueEvents, 10_000);
  const maxQueueBytes = atLeastOne("maxQueueBytes", options.maxQueueBytes, 8 * 1024 * 1024);
  const maxEventBytes = atLeastOne("maxEventBytes", options.maxEventBytes, 16 * 1024);
  const flushTimeoutMs = duration("flushTimeoutMs", options.flushTimeoutMs, 10_000, true);
  const onDrop = options.onDrop ?? warnDrop;

  const queue = new RingQueue<string>();
  const inFlight: string[] = [];
  const idleWaiters = new Set<(finished: boolean) => void>();
  // Aborts in-flight deliveries when close() gives up on them.
  const stop = new AbortController();
  // Drops noticed inside record() are reported after it returns, one report per reason and tick.
  const deferredDrops = new Map<AuditDropReason, AuditEvent<Action>[]>();
  let bytes = 0;
  let delivered = 0;
  let dropped = 0;
  let failures = 0;
  let closed = false;
  let pumpScheduled = false;
  // Set by encode(): the byte size of the body it returned, without allocating a pair.
  let encodedBytes = 0;

  const exitParticipant: ExitParticipant = {
    beforeExit() {
      if (options.flushOnExit === true && !closed) void client.close();
    },
    exit() {
      drop("exit", [...inFlight, ...queue.drain()].map(decode));
    },
  };

  function encode(event: AuditEvent<Action>): string {
    const body = encodeAuditEvent(event, actions);
    encodedBytes = utf8Length(body);
    if (encodedBytes > maxEventBytes) {
      throw new RangeError(
        `This audit event is ${encodedBytes} bytes of JSON, over maxEventBytes (${maxEventBytes}): shorten its description or raise maxEventBytes.`,
      );
    }
    return body;
  }

  function isIdle(): boolean {
    return queue.size === 0 && inFlight.length === 0;
  }

  function pump(): void {
    pumpScheduled = false;
    while (inFlight.length < concurrency && queue.size > 0 && !stop.signal.aborted) {
      const body = queue.shift() as string;
      inFlight.push(body);
      void deliver(body);
    }
  }

  /**
   * Sends one event until it is delivered or dropped. A retriable failure holds the event's slot
   * while it backs off, so that a failing API sees at most `concurrency` requests per backoff
   * period, while the other slots go on delivering when only some requests fail.
   */
  async function deliver(body: string): Promise<void> {
    for (;;) {
      try {
        await api.request("POST", eventPath, { json: body, retry: false, signal: stop.signal });
        failures = 0;
        delivered++;
        settle(body);
        break;
      } catch (error) {
        if (stop.signal.aborted) {
          settle(body);
          drop("closed", [decode(body)], error);
        } else if (isRetriable(error)) {
          if (options.onError !== undefined) callHook(options.onError, error);
          await sleep(backoffMs(error), stop.signal);
          continue;
        } else if (isConfigurationError(error)) {
          // No request can succeed as configured: everything queued would fail the same way.
          settle(body);
          const queued = queue.drain();
          release(queued);
          drop("failed", [body, ...queued].map(decode), error);
        } else {
          settle(body);
          drop("rejected", [decode(body)], error);
        }
        break;
      }
    }
    if (isIdle()) becomeIdle();
    else pump();
  }

  function settle(body: string): void {
    inFlight.splice(inFlight.indexOf(body), 1);
    bytes -= utf8Length(body);
  }

  function release(bodies: string[]): void {
    for (const body of bodies) bytes -= utf8Length(body);
  }

  /** Full jitter over an exponential backoff of consecutive failures, or the server's Retry-After. */
  function backoffMs(error: unknown): number {
    failures++;
    const retryAfter =
      isHttpError(error) && (error.status === 429 || error.status === 503)
        ? retryAfterMs(error.headers.get("retry-after"))
        : undefined;
    return retryAfter === undefined
      ? Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (failures - 1))
      : Math.min(retryAfter, retry.maxRetryAfterMs);
  }

  function becomeIdle(): void {
    unwatchExit(exitParticipant);
    for (const resolve of idleWaiters) resolve(true);
  }

  function decode(body: string): AuditEvent<Action> {
    return decodeAuditEvent(body) as AuditEvent<Action>;
  }

  function drop(reason: AuditDropReason, events: AuditEvent<Action>[], error?: unknown): void {
    if (events.length === 0) return;
    dropped += events.length;
    callHook(onDrop, {
      reason,
      count: events.length,
      events,
      ...(error === undefined ? {} : { error }),
    });
  }

  function dropLater(reason: "overflow" | "closed", event: AuditEvent<Action>): void {
    const events = deferredDrops.get(reason);
    if (events !== undefined) return void events.push(event);
    deferredDrops.set(reason, [event]);
    queueMicrotask(() => {
      const batch = deferredDrops.get(reason) ?? [];
      deferredDrops.delete(reason);
      drop(reason, batch);
    });
  }

  function flush({ timeoutMs, signal }: FlushOptions = {}): Promise<boolean> {
    const limit = duration("timeoutMs", timeoutMs, flushTimeoutMs, true);
    if (isIdle()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (finished: boolean) => {
        idleWaiters.delete(finish);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(finished);
      };
      const onAbort = () => finish(false);
      // Not unref'd: whoever awaits a flush wants the process to wait for it.
      const timer = Number.isFinite(limit) ? setTimeout(finish, limit, false) : undefined;
      signal?.addEventListener("abort", onAbort, { once: true });
      idleWaiters.add(finish);
    });
  }

  const client: AuditClient<Action> = {
    record(event) {
      const body = encode(event);
      if (closed) return dropLater("closed", event);
      if (queue.size + inFlight.length >= maxQueueEvents || bytes + encodedBytes > maxQueueBytes) {
        return dropLater("overflow", event);
      }
      const wasIdle = isIdle();
      queue.push(body);
      bytes += encodedBytes;
      if (wasIdle) {
        watchExit(exitParticipant);
        if (options.waitUntil !== undefined) callHook(options.waitUntil, flush());
      }
      if (!pumpScheduled) {
        pumpScheduled = true;
        queueMicrotask(pump);
      }
    },

    async send(event, callOptions = {}) {
      await api.request("POST", eventPath, { ...callOptions, json: encode(event), retry: false });
    },

    flush,

    async close(closeOptions) {
      closed = true;
      const finished = await flush(closeOptions);
      if (!finished) {
        stop.abort();
        const queued = queue.drain();
        release(queued);
        drop("closed", queued.map(decode));
        // The aborted deliveries settle promptly, each reported as dropped.
        if (isIdle()) becomeIdle();
        else await flush({ timeoutMs: Number.POSITIVE_INFINITY });
      }
      return finished;
    },

    stats() {
      return { queued: queue.size, inFlight: inFlight.length, bytes, delivered, dropped };
    },
  };
  return client;
}

function isRetriable(error: unknown): boolean {
  if (isNetworkError(error) || isTimeoutError(error)) return true;
  return (
    isHttpError(error) && (error.status === 408 || error.status === 429 || error.status >= 500)
  );
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function atLeastOne(name: string, value: number | undefined, fallback: number): number {
  const result = count(name, value, fallback);
  if (result < 1) throw new TypeError(`${name} must be at least 1.`);
  return result;
}

/**
 * Runs an application hook so that its exception can neither corrupt the queue nor vanish: it is
 * rethrown on its own, where the runtime reports uncaught errors.
 */
function callHook<T>(hook: (value: T) => void, value: T): void {
  try {
    hook(value);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

function warnDrop({ reason, count, error }: AuditDrop): void {
  const cause = error instanceof Error ? `: ${error.message}` : "";
  console.warn(
    `platform-integration: dropped ${count} audit event${count === 1 ? "" : "s"} (${reason})${cause}. Pass onDrop to createAuditClient to handle drops.`,
  );
}
