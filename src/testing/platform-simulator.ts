import type { UserPatch, UserRecord } from "../provisioning/user-store.ts";
import {
  connectProvisioning,
  type ProvisioningAnswer,
  type ProvisioningTarget,
} from "./provisioning-target.ts";
import { connectUserReader, type ReadUser, type VerifyReport, verifyUsers } from "./read-user.ts";
import {
  createSimulatedDirectory,
  type DirectoryChange,
  type DirectoryMessage,
} from "./simulated-directory.ts";
import {
  type Message,
  type MessageKind,
  type MessageSummary,
  type SyncStop,
  successStatus,
  summarize,
  toRequest,
  toStop,
} from "./simulator-messages.ts";

/** One answer that counted as success. */
export interface Delivery {
  message: MessageSummary;
  status: number;
  durationMs: number;
  /** 1 for the first time this message was sent; more after a failure or a duplicate. */
  attempt: number;
}

/** What one {@link PlatformSimulator.sync} did. */
export interface SyncReport {
  /** True when every message was acknowledged: the directory and the application agree. */
  completed: boolean;
  /** Every successful answer, in order, including duplicates. */
  delivered: Delivery[];
  /** Set when the cycle stopped early; the next sync() starts again with this message. */
  stoppedAt?: SyncStop;
  /** Messages not yet acknowledged, the one it stopped at included. */
  remaining: number;
  durationMs: number;
}

/** Reported to `onProgress` after each acknowledged message. */
export interface SyncProgress {
  /** Messages acknowledged so far in this cycle. */
  done: number;
  /** Messages this cycle has to deliver: `done` plus those still pending. */
  total: number;
  message: MessageSummary;
}

/**
 * A fault to inject into the next message (or the next of one kind): `drop-request` fails the
 * call with a network error before the application sees it; `drop-response` lets the
 * application process it and loses the answer; `duplicate` delivers it twice in a row. The last
 * two are how the platform redelivers in production.
 */
export interface Fault {
  type: "drop-request" | "drop-response" | "duplicate";
  /** Only messages of this kind; any message (ping included) when absent. */
  on?: MessageKind;
  /** How many messages it hits (default 1). */
  times?: number;
}

/** How {@link createPlatformSimulator} reaches the application, and what it reports. */
export interface PlatformSimulatorOptions {
  /** The Provisioning API's base URL (it may carry a path), or a handler called in-process. */
  target: ProvisioningTarget;
  /** How long one call may take before it counts as a network error (default 30 s). */
  timeoutMs?: number;
  onProgress?(progress: SyncProgress): void;
  /**
   * How to read a user back from the application ({@link ReadUser}: a URL template with
   * `{uuid}`, or a function), for {@link PlatformSimulator.verify}.
   */
  readUser?: ReadUser;
}

/** The platform's side of provisioning, for tests: see {@link createPlatformSimulator}. */
export interface PlatformSimulator {
  /** Adds a user to the directory; throws when its uuid is already there. */
  addUser(user: UserRecord): void;
  /** Changes a user of the directory; only changed fields are sent; throws for an unknown uuid. */
  changeUser(patch: UserPatch): void;
  /** Removes a user from the directory; throws for an unknown uuid. */
  removeUser(uuid: string): void;
  /** Any of the three above, from a {@link DirectoryChange}. */
  apply(change: DirectoryChange): void;
  /** The directory's users, as copies. */
  users(): UserRecord[];
  /** Messages waiting for the next sync(); before the first sync, the initial creates. */
  readonly pending: number;
  injectFault(fault: Fault): void;
  /**
   * Runs one cycle: ping, then every pending message in order until one fails. Never rejects:
   * failures are in the report. Throws if a cycle is already running.
   */
  sync(options?: { signal?: AbortSignal }): Promise<SyncReport>;
  /** Queues `POST /v1/reset` and a create for every user in place of what was pending, then syncs. */
  reset(options?: { signal?: AbortSignal }): Promise<SyncReport>;
  /**
   * Reads every user of the directory back through `readUser` and compares it field by field
   * (the password, its format and undocumented fields aside), and checks that every user removed
   * from the directory is gone. Meaningful after a sync that completed. Throws without `readUser`.
   */
  verify(options?: { signal?: AbortSignal }): Promise<VerifyReport>;
}

/**
 * Plays the platform against a Provisioning API: an in-memory LDAP directory whose changes
 * `sync()` delivers exactly as the platform does. Each cycle pings first (anything but 204 stops
 * it); the first cycle sends a create for every user, later ones the changes made since, one at a
 * time, in order. Only the spec's statuses count (201 create, 204 modify, delete, ping); anything
 * else stops the cycle, and the next `sync()` resumes with the same message, as the platform's
 * cookie does. Faults exercise the application's idempotency.
 *
 * @example
 * ```ts
 * const platform = createPlatformSimulator({ target: "http://127.0.0.1:3000" });
 * platform.addUser({ uuid: "97e86d2d", username: "bob", email: "bob@acme.test" });
 * expect((await platform.sync()).completed).toBe(true);
 * platform.changeUser({ uuid: "97e86d2d", email: "robert@acme.test" });
 * platform.injectFault({ type: "drop-response", on: "modify" });
 * expect((await platform.sync()).stoppedAt?.error).toMatch(/dropped/);
 * expect((await platform.sync()).delivered[1]?.attempt).toBe(2); // [0] is the ping
 * ```
 */
export function createPlatformSimulator(options: PlatformSimulatorOptions): PlatformSimulator {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const send = connectProvisioning(options.target, { timeoutMs });
  const directory = createSimulatedDirectory();
  const faults: (Fault & { times: number })[] = [];
  // The unacknowledged messages are `queue` from index `head` on: the platform's cookie.
  let queue: Message[] = [];
  let head = 0;
  // Until the first cycle, changes only shape the directory that the initial sync sends whole.
  let initialSyncPlanned = false;
  let running = false;

  const enqueue = (message: Omit<Message, "attempts">) => {
    if (initialSyncPlanned) queue.push({ ...message, attempts: 0 });
  };
  const enqueueEveryUser = () => {
    for (const message of directory.creates()) enqueue(message);
  };
  const apply = (change: DirectoryChange) => {
    const message: DirectoryMessage | undefined = directory.apply(change);
    if (message) enqueue(message);
  };

  const takeFault = (kind: MessageKind): Fault["type"] | undefined => {
    const index = faults.findIndex((fault) => fault.on === undefined || fault.on === kind);
    const fault = faults[index];
    if (!fault) return undefined;
    if (--fault.times === 0) faults.splice(index, 1);
    return fault.type;
  };

  /** Sends a message once (twice for a duplicate fault); stops at the first failed answer. */
  const deliver = async (message: Message, signal?: AbortSignal) => {
    const fault = takeFault(message.kind);
    const request = toRequest(message);
    const answers: { answer: ProvisioningAnswer; attempt: number }[] = [];
    for (let copy = fault === "duplicate" ? 2 : 1; copy > 0; copy--) {
      const attempt = ++message.attempts;
      let answer: ProvisioningAnswer =
        fault === "drop-request"
          ? { error: "connection dropped before the request (injected fault)", durationMs: 0 }
          : await send(request, signal);
      if (fault === "drop-response" && answer.status !== undefined) {
        answer = {
          error: "connection dropped before the answer (injected fault)",
          durationMs: answer.durationMs,
        };
      }
      answers.push({ answer, attempt });
      if (answer.status !== successStatus[message.kind]) break;
    }
    return answers;
  };

  const runCycle = async (signal?: AbortSignal): Promise<SyncReport> => {
    const startedAt = performance.now();
    const delivered: Delivery[] = [];
    let done = 0;
    const ping: Message = { kind: "ping", attempts: 0 };
    let stoppedAt: SyncStop | undefined;
    for (let message: Message | undefined = ping; message; message = queue[head]) {
      for (const { answer, attempt } of await deliver(message, signal)) {
        if (answer.status === successStatus[message.kind]) {
          const { status, durationMs } = answer;
          delivered.push({ message: summarize(message), status, durationMs, attempt });
        } else {
          stoppedAt = toStop(message, answer, attempt);
        }
      }
      if (stoppedAt) break;
      if (message === ping) continue;
      head++;
      done++;
      // Changes made during the cycle join it, as the platform's cookie would reach them too.
      const total = done + queue.length - head;
      options.onProgress?.({ done, total, message: summarize(message) });
      // Drop acknowledged messages now and then, without shifting the array on every message.
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
    }
    return {
      completed: stoppedAt === undefined,
      delivered,
      ...(stoppedAt && { stoppedAt }),
      remaining: queue.length - head,
      durationMs: Math.round(performance.now() - startedAt),
    };
  };

  const assertIdle = () => {
    if (running) throw new Error("A sync is running: the platform runs one cycle at a time");
  };

  const sync = async ({ signal }: { signal?: AbortSignal } = {}) => {
    assertIdle();
    running = true;
    try {
      if (!initialSyncPlanned) {
        initialSyncPlanned = true;
        enqueueEveryUser();
      }
      return await runCycle(signal);
    } finally {
      running = false;
    }
  };

  return {
    addUser: (user) => apply({ type: "add", user }),
    changeUser: (patch) => apply({ type: "change", patch }),
    removeUser: (uuid) => apply({ type: "remove", uuid }),
    apply,
    users: () => directory.users(),
    get pending() {
      return initialSyncPlanned ? queue.length - head : directory.size;
    },
    injectFault: (fault) => {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    sync,
    reset: async (resetOptions) => {
      assertIdle();
      // The full re-sync after a reset supersedes whatever was still pending.
      initialSyncPlanned = true;
      queue = [];
      head = 0;
      enqueue({ kind: "reset" });
      enqueueEveryUser();
      return sync(resetOptions);
    },
    async verify({ signal } = {}) {
      if (options.readUser === undefined) {
        throw new TypeError("verify() needs the readUser option of createPlatformSimulator");
      }
      const read = connectUserReader(options.readUser, { timeoutMs });
      return verifyUsers(read, directory.users(), directory.removed(), signal);
    },
  };
}
