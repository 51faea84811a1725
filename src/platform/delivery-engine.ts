// The platform's delivery loop: ping, then one message at a time until one fails, judged by the
// spec's success statuses; shared by the simulator and the directory sync.
import type { JsonValue } from "type-fest";
import {
  type Delivery,
  type OutgoingMessage,
  type SyncStop,
  successStatus,
  summarize,
  toRequest,
} from "./messages.ts";
import type { ProvisioningAnswer, ProvisioningApiClient } from "./provisioning-api-client.ts";

/** What the caller of {@link DeliveryEngine.runCycle} hooks into. */
export interface CycleHooks<Message extends OutgoingMessage = OutgoingMessage> {
  signal?: AbortSignal | undefined;
  /**
   * Called once per message after its success answer, before the next message is taken: where
   * the caller makes the acknowledgement durable (the platform's cookie). A rejection ends the
   * cycle with that error, as an unrecorded acknowledgement must not be built upon.
   */
  acknowledge(message: Message): void | Promise<void>;
  /** Every success answer, duplicates and the ping included, for reports that list them. */
  onDelivered?(delivery: Delivery): void;
  /**
   * Called when a message fails: true holds the message (the caller keeps it for later,
   * unacknowledged) and the cycle goes on with the next; false, or no hook, stops the cycle
   * there. Called before the next message is taken. The directory sync holds a user's message
   * the application refused (a 4xx).
   */
  refuse?(message: Message, stop: SyncStop): boolean;
}

/** How a cycle ended. */
export interface CycleOutcome {
  /** True when every message was acknowledged. */
  completed: boolean;
  /** Set when the cycle stopped at a message; the next cycle starts again with it. */
  stoppedAt?: SyncStop;
  durationMs: number;
}

/**
 * The platform's delivery loop, one for the simulator's in-memory directory and for a real
 * directory: see {@link createDeliveryEngine}.
 */
export interface DeliveryEngine {
  /**
   * Pings, then sends each message in turn, the next once the previous is acknowledged, until
   * one fails. Rejects only when `messages` throws (the directory could not be read) or when
   * `acknowledge` does.
   */
  runCycle<Message extends OutgoingMessage>(
    messages: Iterable<Message> | AsyncIterable<Message>,
    hooks: CycleHooks<Message>,
  ): Promise<CycleOutcome>;
}

/**
 * Sends messages as the platform does: ping first (anything but 204 stops the cycle), then one
 * message at a time, in order; only the spec's status counts as success (201 create, 204 the
 * rest), anything else (another 2xx included), a network error or a time-out stops the cycle.
 * The engine keeps no state between cycles: what to resend is the caller's cookie, advanced in
 * `acknowledge`. A client that delivers a request more than once says so in the answer's
 * `copies`; each copy counts as an attempt.
 */
export function createDeliveryEngine(send: ProvisioningApiClient): DeliveryEngine {
  /** Sends a message; each copy delivered, with its attempt number, oldest first. */
  const deliver = async (message: OutgoingMessage, signal?: AbortSignal) => {
    const answer = await send(toRequest(message), signal);
    const copies = answer.copies ? [...answer.copies, answer] : [answer];
    return copies.map((copy) => ({ answer: copy, attempt: ++message.attempts }));
  };

  /** Sends one message; the stop when it failed, else undefined. */
  const exchange = async (message: OutgoingMessage, hooks: CycleHooks<never>) => {
    for (const { answer, attempt } of await deliver(message, hooks.signal)) {
      if (answer.status !== successStatus[message.kind]) return toStop(message, answer, attempt);
      const { status, durationMs } = answer;
      hooks.onDelivered?.({ message: summarize(message), status, durationMs, attempt });
    }
    return undefined;
  };

  return {
    async runCycle(messages, hooks) {
      const startedAt = performance.now();
      const elapsed = () => Math.round(performance.now() - startedAt);
      let stoppedAt = await exchange({ kind: "ping", attempts: 0 }, hooks);
      if (stoppedAt) return { completed: false, stoppedAt, durationMs: elapsed() };
      for await (const message of messages) {
        stoppedAt = await exchange(message, hooks);
        if (stoppedAt) {
          if (hooks.refuse?.(message, stoppedAt)) continue;
          return { completed: false, stoppedAt, durationMs: elapsed() };
        }
        await hooks.acknowledge(message);
      }
      return { completed: true, durationMs: elapsed() };
    },
  };
}

function toStop(message: OutgoingMessage, answer: ProvisioningAnswer, attempt: number): SyncStop {
  const { durationMs } = answer;
  if (answer.error !== undefined) {
    const { error, fatal } = answer;
    return { message: summarize(message), attempt, error, ...(fatal && { fatal }), durationMs };
  }
  const password = message.body?.password;
  return {
    message: summarize(message),
    attempt,
    status: answer.status,
    ...(answer.body !== undefined && {
      body: typeof password === "string" ? redact(answer.body, password) : answer.body,
    }),
    durationMs,
  };
}

/** The value with every occurrence of `secret` in its strings (keys too) replaced. */
function redact(value: JsonValue, secret: string): JsonValue {
  if (secret === "") return value;
  if (typeof value === "string") return value.replaceAll(secret, "[redacted]");
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, secret));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      redact(key, secret) as string,
      redact(item as JsonValue, secret),
    ]),
  );
}
