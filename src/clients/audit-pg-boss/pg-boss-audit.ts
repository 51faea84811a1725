// The Audit client over pg-boss: the queue and its dead letter queue, the enqueue (outbox) side,
// the workers that deliver (through the shared attempt loop of delivery-failure.ts) and keep dead
// letters, and the listing of dead letters.
import type { Db, Job, JobResult, PgBoss } from "pg-boss";
import {
  type AuditEvent,
  auditEventEncoder,
  decodeAuditEvent,
  deliverAuditEvent,
} from "../audit/audit-event.ts";
import { resolveBaseUrl } from "../integration-api/base-url.ts";
import { atLeastOne, type IntegrationApiOptions } from "../integration-api/client-options.ts";
import { isConfigurationError, isHttpError } from "../integration-api/errors.ts";
import { createIntegrationApi } from "../integration-api/http.ts";
import { type Capabilities, capabilitiesOf } from "../sdk-api/api-selection.ts";

/** Options of {@link createPgBossAudit}. */
export interface PgBossAuditOptions<Action extends string = string>
  extends Omit<IntegrationApiOptions, "totalTimeoutMs"> {
  /** A started pg-boss instance (pg-boss 12) on the application's PostgreSQL database. */
  boss: PgBoss;
  /** The queue's name; its dead letters go to `<queue>.dead`. Default `platform-integration.audit`. */
  queue?: string | undefined;
  /** The catalogue from `defineAuditActions`: events must then use one of its actions. */
  actions?: Readonly<Record<string, Action>> | undefined;
  /** The largest event, in bytes of JSON; a larger one makes `record()` throw. Default 16 KiB. */
  maxEventBytes?: number | undefined;
  /**
   * How soon the jobs of a replica that died are handed to another, in seconds (at least 10;
   * plus up to pg-boss's `superviseIntervalSeconds`). Default 30.
   */
  heartbeatSeconds?: number | undefined;
  /** Called with every failed delivery attempt that will be retried, and with a configuration error. */
  onError?: ((error: unknown) => void) | undefined;
  /** Called with each event the API refused for good, once it is kept as a dead letter. */
  onDeadLetter?: ((letter: AuditDeadLetter<Action>) => void) | undefined;
}

/** Options of `record()`. */
export interface PgBossRecordOptions {
  /**
   * Enqueue through this connection: your transaction's (any object with `executeSql`, or
   * pg-boss's `fromKnex`, `fromKysely`, `fromDrizzle` and `fromPrisma` adapters), so that the
   * event exists if and only if your transaction commits.
   */
  db?: Db | undefined;
}

/** Options of `work()`. */
export interface PgBossWorkOptions {
  /** About how many events this process sends at once (two pg-boss workers share them). Default 8. */
  concurrency?: number | undefined;
  /** How often an idle worker looks for events, in seconds (at least 0.5). Default 2. */
  pollingIntervalSeconds?: number | undefined;
}

/** An event the Audit API refused for good (a 4xx that retrying cannot change), kept in `<queue>.dead`. */
export interface AuditDeadLetter<Action extends string = string> {
  /** The dead letter's job id in `<queue>.dead`. */
  id: string;
  event: AuditEvent<Action>;
  /** The HTTP status of the refusal, when there was an answer. */
  status?: number | undefined;
  /** The error's message. */
  reason: string;
  /** Delivery attempts made by the replica that gave up, its last included. */
  attempts: number;
  /** When it was refused. */
  deadAt: Date;
}

/** Audit events delivered through a pg-boss queue: see {@link createPgBossAudit}. */
export interface PgBossAudit<Action extends string = string> {
  /** What its API serves: the Integration API's, as for `createAuditClient` (audit, nothing of the newer API). */
  readonly capabilities: Readonly<Capabilities>;
  readonly queue: string;
  readonly deadLetterQueue: string;
  /**
   * Enqueues an event and resolves with its job id once the insert is done: committed, or part
   * of the transaction of `options.db`.
   *
   * @throws TypeError or RangeError (synchronously checked, as a rejection) when the event itself
   * is invalid or too large.
   */
  record(event: AuditEvent<Action>, options?: PgBossRecordOptions): Promise<string>;
  /**
   * Starts delivering from the shared queue in this process; run it on every replica.
   *
   * @throws ConfigurationError when no request can succeed as configured (no base URL).
   */
  work(options?: PgBossWorkOptions): Promise<void>;
  /** Stops this process's workers, waiting for the deliveries under way. */
  stopWork(): Promise<void>;
  /** The dead letters, oldest first, up to `limit` (1000) after the id `after`. */
  deadLetters(options?: { limit?: number; after?: string }): Promise<AuditDeadLetter<Action>[]>;
}

interface QueuedEvent {
  /** The event's JSON as the Audit API receives it. */
  body: string;
}

interface DeadEvent extends QueuedEvent {
  attempts: number;
  status?: number;
  reason: string;
  deadAt: string;
}

// pg-boss deletes a job still queued after its retention: no outage may last that long.
const tenYearsSeconds = 10 * 365 * 24 * 3600;

/**
 * Audit events through pg-boss, for applications running many replicas on one PostgreSQL
 * database: `record()` inserts a job (in your transaction, with `db`: an outbox), and every
 * replica that calls `work()` delivers from the shared queue. A replica that dies mid-delivery
 * loses nothing: its jobs' heartbeats stop and another replica sends them (so an event can
 * arrive twice).
 *
 * Failures follow the SDK's retry policy: an outage (network error, time-out, 408, 429, 5xx) is
 * retried without limit, after the backoff or the server's Retry-After, by the replica holding
 * the job; a 3xx up to `retry.limit` times; any other 4xx makes the event a dead letter, kept in
 * `<queue>.dead` with its reason and listed by `deadLetters()`. A configuration error stops the
 * replica's workers and is reported once; the events wait in the queue.
 *
 * @example
 * ```ts
 * const boss = new PgBoss(process.env.DATABASE_URL);
 * await boss.start();
 * const audit = await createPgBossAudit({ boss, actions });
 * await audit.work(); // on every replica
 *
 * await db.transaction(async (tx) => {
 *   await tx.query("UPDATE reports SET ...");
 *   await audit.record({ action: actions.exportReport }, { db: { executeSql: (text, values) => tx.query(text, values) } });
 * });
 * ```
 */
export async function createPgBossAudit<Action extends string = string>(
  options: PgBossAuditOptions<Action>,
): Promise<PgBossAudit<Action>> {
  const { boss } = options;
  const api = createIntegrationApi(options);
  const queue = options.queue ?? "platform-integration.audit";
  const deadLetterQueue = `${queue}.dead`;
  const encode = auditEventEncoder(options);
  const heartbeatSeconds = atLeastOne("heartbeatSeconds", options.heartbeatSeconds, 30);
  const { logger } = api.options;
  const onError =
    options.onError ??
    ((error: unknown) => {
      if (!isConfigurationError(error)) return;
      logger.error(
        `platform-integration: audit delivery from pg-boss stopped on this replica, events wait in the queue: ${error.message}`,
      );
    });
  await ensureQueue(boss, deadLetterQueue, {
    retentionSeconds: tenYearsSeconds,
    deleteAfterSeconds: 0,
  });
  await ensureQueue(boss, queue, {
    // A job is held while its event is retried through an outage; a dead replica is noticed by
    // its stopped heartbeat. A day is the longest pg-boss lets a job stay active.
    heartbeatSeconds,
    expireInSeconds: 24 * 3600,
    retentionSeconds: tenYearsSeconds,
    // A replica's death or a database error (not an answer of the API) is retried by pg-boss.
    retryLimit: 1_000_000,
    retryBackoff: true,
    retryDelay: 1,
    retryDelayMax: 60,
  });
  let working = false;

  /**
   * Sends one event until it is delivered or refused for good, holding its job while it backs
   * off, so that a failing API sees at most `concurrency` requests per backoff period from each
   * replica. The job's heartbeat tells the other replicas that this one is alive.
   */
  async function deliver(job: Job<QueuedEvent>): Promise<JobResult> {
    const { body } = job.data;
    const settled = await deliverAuditEvent(api, body, { signal: job.signal, onRetry: onError });
    if (settled.outcome === "delivered") return { id: job.id, status: "completed" };
    if (settled.outcome === "refused") {
      return await deadLetter(job, settled.error, settled.attempts);
    }
    // Stopped: no retry can fix it. Aborted: the claim is gone (stopping, or expired). Either
    // way pg-boss hands the job out again.
    if (settled.outcome === "stopped") stop(settled.error);
    return { id: job.id, status: "failed", output: { error: describe(settled.error) } };
  }

  /** Keeps a refused event in the dead letter queue, then lets its job complete. */
  async function deadLetter(
    job: Job<QueuedEvent>,
    error: unknown,
    attempts: number,
  ): Promise<JobResult> {
    const dead: DeadEvent = {
      body: job.data.body,
      attempts,
      ...(isHttpError(error) ? { status: error.status } : {}),
      reason: describe(error),
      deadAt: new Date().toISOString(),
    };
    // Kept before the job completes: a crash in between keeps it twice, never zero times.
    const id = await boss.send(deadLetterQueue, dead);
    options.onDeadLetter?.(toDeadLetter<Action>(id ?? "", dead));
    return { id: job.id, status: "completed", output: { deadLetter: id } };
  }

  /** A failure that retrying cannot fix: this replica stops, reporting it once; jobs wait. */
  function stop(error: unknown): void {
    if (!working) return;
    working = false;
    onError(error);
    void boss.offWork(queue);
  }

  return {
    capabilities: capabilitiesOf("integration"),
    queue,
    deadLetterQueue,

    async record(event, recordOptions = {}) {
      const { body } = encode(event);
      const data: QueuedEvent = { body };
      const { db } = recordOptions;
      const id = await boss.send(queue, data, db === undefined ? {} : { db });
      if (id === null) throw new Error(`pg-boss did not enqueue the audit event in ${queue}.`);
      return id;
    },

    async work(workOptions = {}) {
      if (working) return;
      const concurrency = atLeastOne("concurrency", workOptions.concurrency, 8);
      const { pollingIntervalSeconds } = workOptions;
      // Reported here, once, rather than by every delivery: no request can succeed without it.
      resolveBaseUrl(api.options.baseUrl);
      working = true;
      // Two workers, so that one fetches while the other's batch finishes; a full batch fetches
      // again at once (burst), an empty one waits for the polling interval.
      await boss.work<QueuedEvent>(
        queue,
        {
          localConcurrency: 2,
          batchSize: Math.max(2, Math.ceil(concurrency / 2)),
          burstWhenBatchFull: true,
          perJobResults: true,
          ...(pollingIntervalSeconds === undefined ? {} : { pollingIntervalSeconds }),
        },
        (jobs) => Promise.all(jobs.map(deliver)),
      );
    },

    async stopWork() {
      if (!working) return;
      working = false;
      await boss.offWork(queue, { wait: true });
    },

    async deadLetters({ limit = 1000, after } = {}) {
      const jobs = await boss.findJobs<DeadEvent>(deadLetterQueue, {
        limit,
        ...(after === undefined ? {} : { after }),
      });
      return jobs.map((job) => toDeadLetter<Action>(job.id, job.data));
    },
  };
}

/** Creates a queue unless it exists; replicas starting together may race to create it. */
async function ensureQueue(
  boss: PgBoss,
  name: string,
  options: Parameters<PgBoss["createQueue"]>[1],
): Promise<void> {
  if ((await boss.getQueue(name)) !== null) return;
  try {
    await boss.createQueue(name, options);
  } catch (error) {
    if ((await boss.getQueue(name)) === null) throw error;
  }
}

function toDeadLetter<Action extends string>(id: string, dead: DeadEvent): AuditDeadLetter<Action> {
  return {
    id,
    event: decodeAuditEvent(dead.body) as AuditEvent<Action>,
    ...(dead.status === undefined ? {} : { status: dead.status }),
    reason: dead.reason,
    attempts: dead.attempts,
    deadAt: new Date(dead.deadAt),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
