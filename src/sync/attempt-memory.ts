// How many times a message was sent, carried from one cycle to the next: a cycle plans its
// messages afresh from the directory, so the count of the one it stopped at and of those the
// application refused would otherwise start again at zero each cycle.
import type { OutgoingMessage, SyncStop } from "../platform/messages.ts";

/** A planned message with the attempts it already had in earlier cycles. */
export type Resume = <M extends Omit<OutgoingMessage, "attempts">>(
  message: M,
) => M & { attempts: number };

/** The attempt counts of the last cycle's stop and of the messages it held. */
export interface AttemptMemory {
  /** Gives `message` the attempts it had in the last cycle (its own count if it has one). */
  resume: Resume;
  /** Keeps the counts of the cycle that just ended, forgetting the ones before. */
  remember(
    stoppedAt: SyncStop | undefined,
    refused: Iterable<{ message: OutgoingMessage; stop: SyncStop }>,
  ): void;
}

/** An empty memory, for a sync's first cycle. */
export function createAttemptMemory(): AttemptMemory {
  let lastStop: { key: string; attempts: number } | undefined;
  const lastRefused = new Map<string, number>();
  return {
    resume(message) {
      const key = keyOf(message);
      const attempts =
        "attempts" in message
          ? (message.attempts as number)
          : lastStop?.key === key
            ? lastStop.attempts
            : (lastRefused.get(key) ?? 0);
      return { ...message, attempts };
    },
    remember(stoppedAt, refused) {
      lastStop = stoppedAt && { key: keyOf(stoppedAt.message), attempts: stoppedAt.attempt };
      lastRefused.clear();
      for (const { message, stop } of refused) lastRefused.set(keyOf(message), stop.attempt);
    },
  };
}

/** A message's identity across cycles: the same kind of message for the same user. */
function keyOf(message: { kind: string; uuid?: string }): string {
  return `${message.kind} ${message.uuid ?? ""}`;
}
