// The Audit client: its options, the composition of its queue, sender and report, the process
// exit hooks that flush or spool what is left, and the client's methods (record, send, flush,
// close, stats).

import { atLeastOne, duration } from "../integration-api/client-options.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { capabilitiesOf } from "../sdk-api/api-selection.ts";
import { encodeAuditEvent } from "./audit-event.ts";
import { AuditQueue } from "./audit-queue.ts";
import type { AuditClient, AuditClientOptions, AuditDrop, FlushOptions } from "./audit-types.ts";
import { DeliveryReport } from "./delivery-report.ts";
import { type ExitParticipant, unwatchExit, watchExit } from "./exit-hooks.ts";
import { callHook, reportDeliveryError, warnDrop } from "./hooks.ts";
import { AuditSender } from "./sender.ts";
import { observeAuditStats } from "./telemetry.ts";

/**
 * Creates a client of the platform's Audit API (on Node, Bun, Deno and Workers). `record()` is
 * the call for request handlers: it validates and serializes the event, queues it and never
 * waits for the network (its cost per event: bench/README.md, audit.bench.ts). The queue is bounded by count and bytes; every drop is reported.
 *
 * Composed of three parts: the queue (a bounded buffer, fed from the spool on disk when there is
 * one: audit-queue.ts), the sender (the delivery slots: sender.ts) and the report (counters and
 * hooks: delivery-report.ts); this function reads the options, wires them, and adds the exit
 * hooks and the client's methods.
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
  const actions =
    options.actions === undefined ? undefined : new Set<string>(Object.values(options.actions));
  const maxEventBytes = atLeastOne("maxEventBytes", options.maxEventBytes, 16 * 1024);
  const flushTimeoutMs = duration("flushTimeoutMs", options.flushTimeoutMs, 10_000, true);
  const { logger } = api.options;
  const report = new DeliveryReport<Action>({
    onDrop: options.onDrop ?? ((drop: AuditDrop) => warnDrop(logger, drop)),
    onError: options.onError ?? ((error: unknown) => reportDeliveryError(logger, error)),
  });
  let closed = false;

  const queue = new AuditQueue({
    maxItems: atLeastOne("maxQueueEvents", options.maxQueueEvents, 10_000),
    maxBytes: atLeastOne("maxQueueBytes", options.maxQueueBytes, 8 * 1024 * 1024),
    spool: options.spool,
    onBusy() {
      watchExit(exitParticipant);
      if (options.waitUntil !== undefined) callHook(options.waitUntil, flush());
    },
    onIdle() {
      if (!queue.spooled) unwatchExit(exitParticipant);
    },
    onFed: () => sender.schedule(),
    onLost: (reason, bodies, error, count) =>
      count === undefined
        ? report.dropBodies(reason, bodies, error)
        : report.drop(reason, [], error, count),
  });
  const sender = new AuditSender<Action>({
    api,
    policy: api.options.retry,
    concurrency: atLeastOne("concurrency", options.concurrency, 4),
    queue,
    report,
  });

  const exitParticipant: ExitParticipant = {
    beforeExit() {
      if (options.flushOnExit === true && !closed) void client.close();
    },
    exit() {
      // The spool writes what waits for a commit; nothing queued is lost.
      if (queue.closeSync()) return;
      const { blocked } = sender;
      report.dropBodies(
        blocked === undefined ? "exit" : "configuration",
        queue.snapshot().map((item) => item.body),
        blocked,
      );
    },
  };
  // With a spool, the exit hook writes what waits for a commit, whether the buffer is busy or not.
  if (queue.spooled) watchExit(exitParticipant);

  function encode(event: Parameters<AuditClient<Action>["record"]>[0]) {
    return encodeAuditEvent(event, actions, maxEventBytes);
  }

  async function flush({ timeoutMs, signal }: FlushOptions = {}): Promise<boolean> {
    const limit = duration("timeoutMs", timeoutMs, flushTimeoutMs, true);
    // Every event recorded so far is on disk, and so fed into the buffer, before it is waited on.
    await queue.persisted();
    if (sender.blocked !== undefined) return queue.isIdle;
    return queue.whenIdle({ timeoutMs: limit, signal });
  }

  const client: AuditClient<Action> = {
    capabilities: capabilitiesOf("integration"),

    record(event) {
      const { body, bytes } = encode(event);
      if (closed) return report.dropLater("closed", event);
      const refused = queue.add(body, bytes);
      if (refused !== undefined) report.dropLater(refused, event);
    },

    persisted() {
      return queue.persisted();
    },

    async send(event, callOptions = {}) {
      await sender.sendOnce(encode(event).body, callOptions);
    },

    flush,

    async close(closeOptions) {
      closed = true;
      stopObserving();
      const finished = await flush(closeOptions);
      if (!finished) {
        sender.abort();
        const { blocked } = sender;
        const queued = queue.drainQueued().map((item) => item.body);
        // With a spool the events stay on disk, for the next process.
        if (!queue.spooled) {
          report.dropBodies(blocked === undefined ? "closed" : "configuration", queued, blocked);
        }
        // The aborted deliveries settle promptly, each reported as dropped.
        await queue.whenIdle({ timeoutMs: Number.POSITIVE_INFINITY });
      }
      if (queue.spooled) {
        await queue.close();
        unwatchExit(exitParticipant);
      }
      return finished;
    },

    stats() {
      const { blocked } = sender;
      const { delivered, dropped, droppedByReason, retried, lastError } = report.counts();
      const spooled = queue.onDisk;
      return {
        queued: queue.queued,
        inFlight: queue.inFlight,
        bytes: queue.bytes,
        delivered,
        dropped,
        ...(spooled === undefined ? {} : { spooled }),
        droppedByReason,
        retried,
        ...(lastError === undefined ? {} : { lastError }),
        ...(blocked === undefined ? {} : { configurationError: blocked.message }),
      };
    },
  };
  const stopObserving = observeAuditStats(client.stats);
  return client;
}
