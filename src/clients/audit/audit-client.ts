// One unit, over 300 lines: createAuditClient is one closure whose delivery slots, counters,
// configuration stop and spool bookkeeping change together on every record, delivery and close.
// The bounded buffer (buffer.ts), the retry policy and the spool are modules of their own.

import { atLeastOne, duration } from "../integration-api/client-options.ts";
import { judgeDeliveryFailure } from "../integration-api/delivery-failure.ts";
import type { ConfigurationError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { sleep } from "../integration-api/timers.ts";
import { capabilitiesOf } from "../sdk-api/api-selection.ts";
import { type AuditEvent, decodeAuditEvent, encodeAuditEvent } from "./audit-event.ts";
import {
  type AuditClient,
  type AuditClientOptions,
  type AuditDrop,
  type AuditDropReason,
  auditDropReasons,
  type FlushOptions,
} from "./audit-types.ts";
import { BoundedBuffer, type BufferEntry } from "./buffer.ts";
import { type ExitParticipant, unwatchExit, watchExit } from "./exit-hooks.ts";
import { callHook, reportDeliveryError, warnDrop } from "./hooks.ts";
import { AuditSpool } from "./spool/audit-spool.ts";
import type { SpoolRecord } from "./spool/spool.ts";
import { observeAuditStats } from "./telemetry.ts";

const eventPath = "/audit/v1/event";

/**
 * Creates a client of the platform's Audit API (on Node, Bun, Deno and Workers). `record()` is
 * the call for request handlers: it costs well under a microsecond and never waits for the
 * network. The queue is bounded by count and bytes; every drop is reported.
 *
 * The policy sits on a bounded buffer of its own (count and byte caps, flush waiters): each of
 * `concurrency` delivery slots takes an event, sends it, and on a retryable failure holds it while
 * it backs off on its own count of failures, so that a failing API sees at most `concurrency` requests per backoff period while
 * the other slots go on delivering.
 *
 * @example
 * ```ts
 * import { clientIp, createAuditClient, defineAuditActions } from "platform-integration/audit";
 *
 * const actions = defineAuditActions({ userLogin: "user.login.success" });
 * const audit = createAuditClient({ actions, tls: { ca: process.env.PLATFORM_CA }, flushOnExit: true });
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
  const maxEventBytes = atLeastOne("maxEventBytes", options.maxEventBytes, 16 * 1024);
  const flushTimeoutMs = duration("flushTimeoutMs", options.flushTimeoutMs, 10_000, true);
  const { logger } = api.options;
  const onDrop = options.onDrop ?? ((drop: AuditDrop) => warnDrop(logger, drop));
  const onError = options.onError ?? ((error: unknown) => reportDeliveryError(logger, error));

  // What the buffer holds: an event's JSON, and with a spool, where it lies on disk.
  const buffer = new BoundedBuffer<{ readonly body: string }>({
    maxItems: atLeastOne("maxQueueEvents", options.maxQueueEvents, 10_000),
    maxBytes: atLeastOne("maxQueueBytes", options.maxQueueBytes, 8 * 1024 * 1024),
    onBusy() {
      watchExit(exitParticipant);
      if (options.waitUntil !== undefined) callHook(options.waitUntil, flush());
    },
    onIdle() {
      if (spool === undefined) unwatchExit(exitParticipant);
    },
  });
  // Aborts in-flight deliveries when close() gives up on them.
  const stop = new AbortController();
  // Drops noticed inside record() are reported after it returns, one report per reason and tick.
  const deferredDrops = new Map<AuditDropReason, AuditEvent<Action>[]>();
  let delivered = 0;
  let dropped = 0;
  let retried = 0;
  let lastError: { message: string; at: string } | undefined;
  const droppedByReason = Object.fromEntries(
    auditDropReasons.map((reason) => [reason, 0]),
  ) as Record<AuditDropReason, number>;
  let slots = 0;
  let closed = false;
  let pumpScheduled = false;
  // Set by the first configuration error: delivery stops, events are kept until close or exit.
  let blocked: ConfigurationError | undefined;
  // With a spool, the buffer is fed from disk; events leave the spool after a 2xx or a drop.
  const spool =
    options.spool === undefined
      ? undefined
      : new AuditSpool(options.spool, {
          onDurable: refill,
          onFailed: (bodies, reason, error) => drop(reason, bodies.map(decode), error),
          // The events cannot be read: at least one was lost there, counted as one.
          onDamaged: (error) => drop("spool_damaged", [], error, 1),
        });

  const exitParticipant: ExitParticipant = {
    beforeExit() {
      if (options.flushOnExit === true && !closed) void client.close();
    },
    exit() {
      // The spool writes what waits for a commit; nothing queued is lost.
      if (spool !== undefined) return spool.closeSync();
      drop(
        blocked === undefined ? "exit" : "configuration",
        buffer.snapshot().map((item) => decode(item.body)),
        blocked,
      );
    },
  };
  // With a spool, the exit hook writes what waits for a commit, whether the buffer is busy or not.
  if (spool !== undefined) watchExit(exitParticipant);

  function encode(event: AuditEvent<Action>) {
    return encodeAuditEvent(event, actions, maxEventBytes);
  }

  function decode(body: string): AuditEvent<Action> {
    return decodeAuditEvent(body) as AuditEvent<Action>;
  }

  function refill(): void {
    // An event larger than maxQueueBytes (recorded under other options) still goes, alone.
    spool?.refill(
      (record, bytes) => buffer.offer(record, bytes) || buffer.offerAlone(record, bytes),
    );
    schedulePump();
  }

  function schedulePump(): void {
    if (!pumpScheduled && blocked === undefined && buffer.queued > 0) {
      pumpScheduled = true;
      queueMicrotask(pump);
    }
  }

  /** Lets go of an event delivered or dropped: the spool forgets it, and feeds the next. */
  function release(entry: BufferEntry<{ readonly body: string }>): void {
    if (spool === undefined) {
      buffer.settle(entry);
      return;
    }
    spool.ack(entry.item as SpoolRecord);
    // Refilled into the room the entry frees, before the buffer checks whether it is idle: a full
    // buffer must not look idle (and flush() resolve true) while the spool holds events.
    buffer.settle(entry, refill);
  }

  function pump(): void {
    pumpScheduled = false;
    while (slots < concurrency && buffer.queued > 0 && blocked === undefined) {
      slots++;
      void runSlot();
    }
  }

  function next(): BufferEntry<{ readonly body: string }> | undefined {
    return blocked === undefined && !stop.signal.aborted ? buffer.take() : undefined;
  }

  /**
   * One delivery slot: takes events until none is left, sending each until it is delivered or
   * dropped. Its backoff counts its own consecutive failures, reset by any answer that settles
   * an event.
   */
  async function runSlot(): Promise<void> {
    let failures = 0;
    let redirects = 0;
    let entry = next();
    while (entry !== undefined) {
      const outcome = await deliver(entry.item.body);
      if (outcome === undefined) {
        delivered++;
      } else if (stop.signal.aborted) {
        // With a spool the event stays on disk, for the next process.
        if (spool === undefined) drop("closed", [decode(entry.item.body)], outcome);
        buffer.settle(entry);
        entry = next();
        continue;
      } else {
        const verdict = judgeDeliveryFailure(
          outcome,
          { failures: failures + 1, redirectsRetried: redirects },
          retry,
        );
        if (verdict.action === "stop") {
          block(verdict.error);
          buffer.requeue(entry);
          break;
        }
        if (verdict.action === "retry") {
          failures++;
          retried++;
          if (verdict.redirect) redirects++;
          noteError(outcome);
          callHook(onError, outcome);
          await sleep(verdict.delayMs, stop.signal);
          continue;
        }
        drop(verdict.redirect ? "redirected" : "rejected", [decode(entry.item.body)], outcome);
      }
      failures = 0;
      redirects = 0;
      release(entry);
      entry = next();
    }
    slots--;
  }

  /** Sends one event: undefined once the API accepted it, else the error. */
  async function deliver(body: string): Promise<unknown> {
    try {
      await api.request("POST", eventPath, { json: body, retry: false, signal: stop.signal });
      return undefined;
    } catch (error) {
      return error;
    }
  }

  function noteError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    lastError = { message, at: new Date().toISOString() };
  }

  /** Stops delivery for a failure that retrying cannot fix, reporting it once. */
  function block(error: ConfigurationError): void {
    if (blocked !== undefined) return;
    blocked = error;
    noteError(error);
    callHook(onError, error);
    buffer.releaseWaiters();
  }

  function drop(
    reason: AuditDropReason,
    events: AuditEvent<Action>[],
    error?: unknown,
    count = events.length,
  ): void {
    if (count === 0) return;
    dropped += count;
    droppedByReason[reason] += count;
    if (error !== undefined) noteError(error);
    callHook(onDrop, { reason, count, events, ...(error === undefined ? {} : { error }) });
  }

  function dropLater(
    reason: "overflow" | "closed" | "spool_full",
    event: AuditEvent<Action>,
  ): void {
    const events = deferredDrops.get(reason);
    if (events !== undefined) return void events.push(event);
    deferredDrops.set(reason, [event]);
    queueMicrotask(() => {
      const batch = deferredDrops.get(reason) ?? [];
      deferredDrops.delete(reason);
      drop(reason, batch);
    });
  }

  async function flush({ timeoutMs, signal }: FlushOptions = {}): Promise<boolean> {
    const limit = duration("timeoutMs", timeoutMs, flushTimeoutMs, true);
    // Every event recorded so far is on disk, and so fed into the buffer, before it is waited on.
    await spool?.persisted();
    if (blocked !== undefined) return buffer.isIdle;
    return buffer.whenIdle({ timeoutMs: limit, signal });
  }

  const client: AuditClient<Action> = {
    capabilities: capabilitiesOf("integration"),

    record(event) {
      const { body, bytes } = encode(event);
      if (closed) return dropLater("closed", event);
      if (spool !== undefined) {
        if (!spool.append(body, bytes)) dropLater("spool_full", event);
        return;
      }
      if (!buffer.offer({ body }, bytes)) return dropLater("overflow", event);
      schedulePump();
    },

    persisted() {
      return spool === undefined ? Promise.resolve(false) : spool.persisted();
    },

    async send(event, callOptions = {}) {
      await api.request("POST", eventPath, {
        ...callOptions,
        json: encode(event).body,
        retry: false,
      });
    },

    flush,

    async close(closeOptions) {
      closed = true;
      stopObserving();
      const finished = await flush(closeOptions);
      if (!finished) {
        stop.abort();
        const reason = blocked === undefined ? "closed" : "configuration";
        const queued = buffer.drainQueued().map((item) => decode(item.body));
        // With a spool the events stay on disk, for the next process.
        if (spool === undefined) drop(reason, queued, blocked);
        // The aborted deliveries settle promptly, each reported as dropped.
        await buffer.whenIdle({ timeoutMs: Number.POSITIVE_INFINITY });
      }
      if (spool !== undefined) {
        await spool.close();
        unwatchExit(exitParticipant);
      }
      return finished;
    },

    stats() {
      return {
        queued: buffer.queued,
        inFlight: buffer.inFlight,
        bytes: buffer.bytes,
        delivered,
        dropped,
        ...(spool === undefined ? {} : { spooled: spool.events }),
        droppedByReason: { ...droppedByReason },
        retried,
        ...(lastError === undefined ? {} : { lastError: { ...lastError } }),
        ...(blocked === undefined ? {} : { configurationError: blocked.message }),
      };
    },
  };
  const stopObserving = observeAuditStats(client.stats);
  return client;
}
