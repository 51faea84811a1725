// The Audit client: its options, the composition of its queue, sender and report, the process
// exit hooks that flush or spool what is left, and the client's methods (record, send, flush,
// close, stats); with its two other forms, chosen at construction: the sink client (events go to
// the application's own function) and the client of a newer install without one (events dropped).

import { baseUrlVariable } from "../integration-api/base-url.ts";
import { atLeastOne, duration, normalizeOptions } from "../integration-api/client-options.ts";
import { UnsupportedOperationError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { capabilitiesOf, sdkBaseUrlVariable, selectApi } from "../sdk-api/api-selection.ts";
import { type AuditEvent, auditEventEncoder } from "./audit-event.ts";
import { AuditQueue } from "./audit-queue.ts";
import type {
  AuditClient,
  AuditClientOptions,
  AuditDrop,
  AuditStats,
  FlushOptions,
} from "./audit-types.ts";
import { BoundedBuffer, type BufferEntry } from "./buffer.ts";
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
  // The Version and License clients' rule (selectApi): without a baseUrl, an install without
  // PLATFORM_INTEGRATIONAPI is a newer one, which runs no Audit API (no variable reaches its
  // pods; PLATFORM_SDK_API is the application's own). Decided here, at construction, unlike
  // theirs (at first use): the client holds state from now on (its spool is read back, its exit
  // hooks and metrics installed), and says at start-up, not at the first audited action, that
  // events have nowhere to go. Create it after the environment is set, or pass baseUrl.
  const newerInstall = selectApi(undefined, options.baseUrl) === "sdk";
  if (options.sink !== undefined) return createSinkAuditClient(options, newerInstall);
  if (newerInstall) return createNoAuditClient(options);
  const api = createIntegrationApi(options);
  const { encode, flushTimeoutMs, report } = commonParts(options, api.options.logger);
  let closed = false;

  const queue = new AuditQueue({
    ...queueBounds(options),
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

/**
 * The options every audit client reads the same way, whatever it delivers to. `logger` is the
 * one the API client resolved; without an API client, the shared options (logger, time-outs...)
 * are validated here as it would.
 */
function commonParts<Action extends string>(
  options: AuditClientOptions<Action>,
  logger = normalizeOptions(options).logger,
) {
  const encode = auditEventEncoder(options);
  const flushTimeoutMs = duration("flushTimeoutMs", options.flushTimeoutMs, 10_000, true);
  const report = new DeliveryReport<Action>({
    onDrop: options.onDrop ?? ((drop: AuditDrop) => warnDrop(logger, drop)),
    onError: options.onError ?? ((error: unknown) => reportDeliveryError(logger, error)),
  });
  return { logger, encode, flushTimeoutMs, report };
}

/** The most events, and bytes of them, a client holds unsettled: the queue's, or the sink's. */
function queueBounds(options: Pick<AuditClientOptions, "maxQueueEvents" | "maxQueueBytes">) {
  return {
    maxItems: atLeastOne("maxQueueEvents", options.maxQueueEvents, 10_000),
    maxBytes: atLeastOne("maxQueueBytes", options.maxQueueBytes, 8 * 1024 * 1024),
  };
}

const noAuditApi = `${baseUrlVariable} is not set (nor the baseUrl option), so this is one of the platform's newer install methods, which run no Audit API (${sdkBaseUrlVariable}, when set, names their in-cluster service, which has none)`;
const noAuditAdvice = `On a newer install, pass createAuditClient a sink function of the application's own (its log, database or SIEM), or send audit events as OpenTelemetry logs. On a legacy install, set ${baseUrlVariable} to the Integration API's address (or pass baseUrl), before the client is created.`;

/** A newer install without a sink: every event is dropped at once, said once at construction. */
function createNoAuditClient<Action extends string>(
  options: AuditClientOptions<Action>,
): AuditClient<Action> {
  const { logger, encode, report } = commonParts(options);
  const unsupported = new UnsupportedOperationError({
    api: "sdk",
    operation: "audit.record",
    reason: noAuditApi,
    alternative: noAuditAdvice,
  });
  logger.warn(
    `platform-integration: audit events have nowhere to go: ${noAuditApi}, so each one recorded is dropped at once (reason "configuration", reported to onDrop). ${noAuditAdvice}`,
  );
  const stats = (): AuditStats => ({
    ...queuelessStats(report, 0),
    configurationError: unsupported.message,
  });
  return {
    capabilities: capabilitiesOf("sdk"),
    record(event) {
      encode(event);
      report.dropLater("configuration", event, unsupported);
    },
    persisted: async () => false,
    async send(event) {
      encode(event);
      throw unsupported;
    },
    flush: async () => true,
    close: async () => true,
    stats,
  };
}

/**
 * Events go to the application's own sink, validated as for the API, each once, with the API
 * client's guarantees: at most `maxQueueEvents` / `maxQueueBytes` handed over and unsettled (more
 * are dropped as `overflow`), `close()` drops what the sink still holds when it gives up
 * (`closed`), and the exit hooks close on `beforeExit` with `flushOnExit` and drop what is left at
 * exit (`exit`): every event reaches the sink or `onDrop`, never neither.
 */
function createSinkAuditClient<Action extends string>(
  options: AuditClientOptions<Action>,
  newerInstall: boolean,
): AuditClient<Action> {
  if (typeof options.sink !== "function") {
    throw new TypeError("The sink option must be a function.");
  }
  const { encode, flushTimeoutMs, report } = commonParts(options);
  const sink = options.sink as (event: AuditEvent<Action>) => void | Promise<void>;
  // Each event handed to the sink and not settled yet is in flight in this buffer, bounded as the
  // queue is; it leaves once settled or reported as dropped, so that each event is counted once.
  const handed = new BoundedBuffer<AuditEvent<Action>>({
    ...queueBounds(options),
    onBusy: () => watchExit(exitParticipant),
    onIdle: () => unwatchExit(exitParticipant),
  });
  let closed = false;

  const exitParticipant: ExitParticipant = {
    beforeExit() {
      if (options.flushOnExit === true && !closed) void client.close();
    },
    exit() {
      giveUp("exit");
    },
  };

  /** Drops every event the sink still holds; a later settling of one counts nothing. */
  function giveUp(reason: "closed" | "exit") {
    report.drop(reason, handed.drainInFlight());
  }

  function deliver(event: AuditEvent<Action>): Promise<void> {
    return (async () => sink(event))();
  }

  async function flush({ timeoutMs, signal }: FlushOptions = {}): Promise<boolean> {
    const limit = duration("timeoutMs", timeoutMs, flushTimeoutMs, true);
    return handed.whenIdle({ timeoutMs: limit, signal });
  }

  const client: AuditClient<Action> = {
    capabilities: capabilitiesOf(newerInstall ? "sdk" : "integration"),
    record(event) {
      // Validated as for the API: an event the API would refuse is refused here too.
      const { bytes } = encode(event);
      if (closed) return report.dropLater("closed", event);
      if (!handed.offer(event, bytes)) return report.dropLater("overflow", event);
      // Handed over at once: the entry just offered, the only one ever queued, goes into flight.
      const entry = handed.take() as BufferEntry<AuditEvent<Action>>;
      const delivery = deliver(event).then(
        () => {
          if (handed.settle(entry)) report.delivered();
        },
        (error: unknown) => {
          if (handed.settle(entry)) report.drop("rejected", [event], error);
        },
      );
      if (options.waitUntil !== undefined) callHook(options.waitUntil, delivery);
    },
    persisted: async () => false,
    async send(event) {
      encode(event);
      await deliver(event);
      report.delivered();
    },
    flush,
    async close(closeOptions) {
      closed = true;
      const finished = await flush(closeOptions);
      if (!finished) giveUp("closed");
      return finished;
    },
    stats: () => ({ ...queuelessStats(report, handed.inFlight), bytes: handed.bytes }),
  };
  return client;
}

/** The counters of a client without a queue: nothing waits, `inFlight` events are being handed over. */
function queuelessStats<Action extends string>(
  report: DeliveryReport<Action>,
  inFlight: number,
): AuditStats {
  const { delivered, dropped, droppedByReason, retried, lastError } = report.counts();
  return {
    queued: 0,
    inFlight,
    bytes: 0,
    delivered,
    dropped,
    droppedByReason,
    retried,
    ...(lastError === undefined ? {} : { lastError }),
  };
}
