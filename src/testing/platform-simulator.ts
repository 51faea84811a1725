import { createDeliveryEngine } from "../platform/delivery-engine.ts";
import {
  changedFields,
  type Delivery,
  type MessageKind,
  type MessageSummary,
  type OutgoingMessage,
  type SyncStop,
  summarize,
} from "../platform/messages.ts";
import {
  connectProvisioning,
  type ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
import { connectUserReader, type ReadUser } from "../platform/read-user.ts";
import { type VerifyReport, verifyUsers } from "../platform/verify-users.ts";
import { toWireUser } from "../platform/wire-user.ts";
import { mergeUser } from "../users/merge-user.ts";
import type { UserFieldName, UserPatch, UserRecord } from "../users/user-record.ts";
import { type Fault, withFaults } from "./faults.ts";
import {
  createScimIdentityProvider,
  type ScimIdentityProviderOptions,
} from "./scim-identity-provider.ts";

// The delivery loop and its messages are the platform's side (src/platform): one engine for the
// simulator's in-memory directory and a real LDAP directory.
export type { Delivery, MessageKind, MessageSummary, SyncStop };

/** A change in the simulated directory, as {@link PlatformSimulator.apply} takes it. */
export type DirectoryChange =
  | { type: "add"; user: UserRecord }
  /** Fields absent keep their value, `null` clears one (sent as JSON `null`). */
  | { type: "change"; patch: UserPatch }
  | { type: "remove"; uuid: string };

/** What one {@link PlatformSimulator.sync} did. */
export interface SimulatorSyncReport {
  /** True when every message was acknowledged: the directory and the application agree. */
  completed: boolean;
  /** Every successful answer, in order, including duplicates. */
  delivered: Delivery[];
  /** Set when the cycle stopped early; the next sync() starts again with this message. */
  stoppedAt?: SyncStop;
  /**
   * True when the application stopped the cycle (an answer other than the expected status, or
   * none): the platform would pause the whole directory there and send the same message next
   * cycle. Absent when the cycle completed or was aborted by its `signal`.
   */
  stalled?: true;
  /** Messages not yet acknowledged, the one it stopped at included. */
  remaining: number;
  durationMs: number;
}

/** Reported to `onProgress` after each acknowledged message. */
export interface SimulatorSyncProgress {
  /** Messages acknowledged so far in this cycle. */
  done: number;
  /** Messages this cycle has to deliver: `done` plus those still pending. */
  total: number;
  message: MessageSummary;
}

/** How {@link createPlatformSimulator} reaches the application, and what it reports. */
export interface PlatformSimulatorOptions {
  /** The Provisioning API's base URL (it may carry a path), or a handler called in-process. */
  target: ProvisioningTarget;
  /** How long one call may take before it counts as a network error (default 30 s). */
  timeoutMs?: number | undefined;
  onProgress?(progress: SimulatorSyncProgress): void;
  /**
   * How to read a user back from the application ({@link ReadUser}: a URL template with
   * `{uuid}`, or a function), for {@link PlatformSimulator.verify}.
   */
  readUser?: ReadUser;
  /**
   * Pushes the directory into a SCIM 2.0 service instead, as Entra ID (or Okta) would: `target`
   * is then the SCIM service (its base URL, the part before `/Users`, or a handler), and each
   * message becomes the identity provider's SCIM calls (see `createScimIdentityProvider`).
   * `readUser` defaults to reading users back through SCIM, so `verify()` works as it is.
   */
  scim?: Omit<ScimIdentityProviderOptions, "target" | "timeoutMs"> | undefined;
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
  /**
   * Swaps a field's values between two users as a directory admin does, one after the other:
   * `first` takes `second`'s value while `second` still holds it, then `second` takes `first`'s
   * old one. Two modifies; against an application with that field unique, the first conflicts.
   */
  swapValues(
    field: Exclude<UserFieldName, "password" | "passwordFormat">,
    first: string,
    second: string,
  ): void;
  /** The directory's users, as copies. */
  users(): UserRecord[];
  /** Messages waiting for the next sync(); before the first sync, the initial creates. */
  readonly pending: number;
  /** Makes a coming message fail, as {@link withFaults} does: see {@link Fault}. */
  injectFault(fault: Fault): void;
  /**
   * Runs one cycle: ping, then every pending message in order until one fails. Never rejects:
   * failures are in the report. Throws if a cycle is already running.
   */
  sync(options?: { signal?: AbortSignal }): Promise<SimulatorSyncReport>;
  /** Queues `POST /v1/reset` and a create for every user in place of what was pending, then syncs. */
  reset(options?: { signal?: AbortSignal }): Promise<SimulatorSyncReport>;
  /**
   * Reads every user of the directory back through `readUser` and compares it field by field
   * (the password, its format and undocumented fields aside), and checks that every user removed
   * from the directory is gone; see {@link VerifyReport}. Meaningful after a sync that completed.
   * Throws without `readUser`.
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
  const identityProvider =
    options.scim === undefined
      ? undefined
      : createScimIdentityProvider({ ...options.scim, target: options.target, timeoutMs });
  const client = withFaults(connectProvisioning(identityProvider ?? options.target, { timeoutMs }));
  const readUser = options.readUser ?? identityProvider?.readUser;
  const engine = createDeliveryEngine(client);
  const directory = new Map<string, UserRecord>();
  // Users removed from the directory, which the application must no longer hold.
  const removed = new Set<string>();
  // The unacknowledged messages are `queue` from index `head` on: the platform's cookie.
  let queue: OutgoingMessage[] = [];
  let head = 0;
  // Until the first cycle, changes only shape the directory that the initial sync sends whole.
  let initialSyncPlanned = false;
  let running = false;

  const enqueue = (message: Omit<OutgoingMessage, "attempts">) => {
    if (initialSyncPlanned) queue.push({ ...message, attempts: 0 });
  };
  const enqueueEveryUser = () => {
    for (const user of directory.values()) {
      enqueue({ kind: "create", uuid: user.uuid, body: toWireUser(user) });
    }
  };

  const apply = (change: DirectoryChange) => {
    if (change.type === "add") {
      const { uuid } = change.user;
      if (directory.has(uuid)) throw new Error(`The directory already has a user ${uuid}`);
      const user = mergeUser(undefined, change.user);
      directory.set(uuid, user);
      removed.delete(uuid);
      enqueue({ kind: "create", uuid, body: toWireUser(user) });
      return;
    }
    const uuid = change.type === "change" ? change.patch.uuid : change.uuid;
    const existing = directory.get(uuid);
    if (!existing) throw new Error(`The directory has no user ${uuid}`);
    if (change.type === "remove") {
      directory.delete(uuid);
      removed.add(uuid);
      enqueue({ kind: "delete", uuid });
      return;
    }
    const user = mergeUser(existing, change.patch);
    directory.set(uuid, user);
    const body = changedFields(toWireUser(existing), toWireUser(user));
    // An LDAP entry saved unchanged produces no change to propagate.
    if (body) enqueue({ kind: "modify", uuid, body });
  };

  const runCycle = async (signal?: AbortSignal): Promise<SimulatorSyncReport> => {
    const delivered: Delivery[] = [];
    let done = 0;
    // Changes made during the cycle join it, as the platform's cookie would reach them too.
    function* unacknowledged() {
      while (head < queue.length) yield queue[head] as OutgoingMessage;
    }
    const outcome = await engine.runCycle(unacknowledged(), {
      signal,
      onDelivered: (delivery) => delivered.push(delivery),
      acknowledge: (message) => {
        head++;
        done++;
        options.onProgress?.({
          done,
          total: done + queue.length - head,
          message: summarize(message),
        });
        // Drop acknowledged messages now and then, without shifting the array on every message.
        if (head > 1024 && head * 2 > queue.length) {
          queue = queue.slice(head);
          head = 0;
        }
      },
    });
    return {
      completed: outcome.completed,
      delivered,
      ...(outcome.stoppedAt && { stoppedAt: outcome.stoppedAt }),
      ...(outcome.stoppedAt && !signal?.aborted && { stalled: true as const }),
      remaining: queue.length - head,
      durationMs: outcome.durationMs,
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
    swapValues(field, first, second) {
      const one = directory.get(first);
      const two = directory.get(second);
      if (!one) throw new Error(`The directory has no user ${first}`);
      if (!two) throw new Error(`The directory has no user ${second}`);
      apply({ type: "change", patch: { uuid: first, [field]: two[field] ?? null } });
      apply({ type: "change", patch: { uuid: second, [field]: one[field] ?? null } });
    },
    users: () => [...directory.values()].map((user) => structuredClone(user)),
    get pending() {
      return initialSyncPlanned ? queue.length - head : directory.size;
    },
    injectFault: client.injectFault,
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
      if (readUser === undefined) {
        throw new TypeError("verify() needs the readUser option of createPlatformSimulator");
      }
      const read = connectUserReader(readUser, { timeoutMs });
      const present = [...directory.values()].map((user) => structuredClone(user));
      return verifyUsers(read, { present, gone: [...removed], signal });
    },
  };
}
