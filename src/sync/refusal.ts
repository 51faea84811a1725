// Refused users: which failed answers refuse one user's message (the sync holds it and goes on
// with the others) and which stop the cycle; how a cycle holds the refused, retries them once the
// others were sent, and unties a username swap with a temporary username.
import type { OutgoingMessage, SyncStop } from "../platform/messages.ts";
import type { AcknowledgedState } from "./acknowledged-state.ts";
import type { Resume } from "./attempt-memory.ts";
import type { PlannedMessage } from "./cycle-plan.ts";

const maxRefusalsListed = 100;

/**
 * Answers that concern the request or the application rather than the user: an application that
 * answers them to one message would answer them to the next, so they stop the cycle as a 5xx does.
 */
const stopStatuses = new Set([401, 403, 405, 407, 408, 429]);

/**
 * Whether an answer refuses this user's message (a 4xx to a create, modify or delete, such as a
 * 409 for a username another user holds): the sync goes on with the other users. Any other
 * failure (a 5xx, a network error, a time-out, 401, 403, 405, 407, 408, 429, another 2xx) stops the
 * cycle.
 */
export function isRefusal(message: OutgoingMessage, stop: SyncStop): boolean {
  const { status } = stop;
  return (
    message.uuid !== undefined &&
    (message.kind === "create" || message.kind === "modify" || message.kind === "delete") &&
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    !stopStatuses.has(status)
  );
}

/**
 * The username a user is moved to for a moment when two users swap usernames (or more rotate
 * them) within one cycle and the application keeps usernames unique: `sync-tmp-<uuid>`.
 */
export function stagingUsername(uuid: string): string {
  return `sync-tmp-${uuid}`;
}

/** A refused message and the answer that refused it. */
export interface Refusal {
  message: PlannedMessage;
  stop: SyncStop;
}

/** One cycle's refused messages, by user, in the order they came. */
export interface RefusalHold {
  /**
   * The cycle's messages with each user's held back once one of theirs was refused, then the
   * refused sent again (see {@link holdRefusals}).
   */
  order(messages: AsyncIterable<PlannedMessage>): AsyncGenerator<PlannedMessage>;
  /** Holds `message` if `stop` refuses it (the engine goes on), or tells that it stops the cycle. */
  refuse(message: PlannedMessage, stop: SyncStop): boolean;
  /** The user's message was acknowledged: nothing of theirs is held any more. */
  release(uuid: string): void;
  /** No message held and none waited behind one: the cycle may count as complete. */
  readonly settled: boolean;
  /** The messages still held. */
  held(): IterableIterator<Refusal>;
  /** How many are held, and the first 100 answers, for the report. */
  summary(): { refused: number; refusals: SyncStop[] };
}

/**
 * Holds each refused user's message (unacknowledged: the next cycle's diff sends it again, and no
 * Content Sync cookie is kept past it) while the cycle goes on with the other users, and sends the
 * refused again once every other was sent: a user renamed later in the directory's order may have
 * freed the username one was refused for. Passes repeat while one is accepted; then a username
 * swap (or rotation), which no order can serve, is staged: one of its users is renamed to
 * {@link stagingUsername} for a moment, which frees the name.
 */
export function holdRefusals(
  acknowledged: Pick<AcknowledgedState, "get" | "holderOf">,
  resume: Resume,
): RefusalHold {
  const refused = new Map<string, Refusal>();
  // Set when a message waited behind a refused one of its user's: the cycle is not complete.
  let deferred = false;

  async function* retryRefused(): AsyncGenerator<PlannedMessage> {
    // Each staging takes one user off a username for good: at most one per refused message.
    for (let stagings = refused.size; ; stagings--) {
      let accepted = true;
      while (accepted) {
        accepted = false;
        for (const [uuid, { message, stop }] of [...refused]) {
          // Only a conflict (409) may be undone by another user's message of this cycle.
          if (stop.status !== 409) continue;
          refused.delete(uuid);
          yield resume(message);
          if (!refused.has(uuid)) accepted = true;
        }
      }
      const staging = stagings > 0 ? nextStaging() : undefined;
      if (staging === undefined) return;
      yield staging;
      if (acknowledged.get(staging.uuid as string)?.username !== staging.staging) return;
    }
  }

  /** A rename to a temporary username that unties a swap among the refused, if there is one. */
  const nextStaging = (): PlannedMessage | undefined => {
    for (const [uuid, { message, stop }] of refused) {
      const wanted = message.record?.username;
      if (stop.status !== 409) continue;
      if (typeof wanted !== "string") continue;
      const holder = acknowledged.holderOf(wanted, uuid);
      const held = holder === undefined ? undefined : refused.get(holder);
      // The holder is refused too, and its own message takes it off that username.
      if (holder === undefined || held?.stop.status !== 409) continue;
      if (held.message.record?.username === wanted) continue;
      const temporary = stagingUsername(holder);
      return {
        kind: "modify",
        uuid: holder,
        body: { uuid: holder, username: temporary },
        attempts: 0,
        staging: temporary,
      };
    }
    return undefined;
  };

  return {
    async *order(messages) {
      for await (const message of messages) {
        const uuid = message.uuid;
        if (uuid !== undefined && refused.has(uuid)) {
          // Left for the next cycle's diff, which no Content Sync cookie of this cycle may pass.
          deferred = true;
          continue;
        }
        yield message;
      }
      yield* retryRefused();
    },
    refuse(message, stop) {
      if (!isRefusal(message, stop)) return false;
      // A staging rename refused leaves the swap as it was: its users' own messages stay held.
      if (message.staging !== undefined) return true;
      refused.set(message.uuid as string, { message, stop });
      return true;
    },
    release(uuid) {
      refused.delete(uuid);
    },
    get settled() {
      return refused.size === 0 && !deferred;
    },
    held: () => refused.values(),
    summary: () => ({
      refused: refused.size,
      refusals: [...refused.values()].slice(0, maxRefusalsListed).map(({ stop }) => stop),
    }),
  };
}
