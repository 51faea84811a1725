// Which failed answers refuse one user's message (the sync holds it and goes on with the others)
// and which stop the cycle; and the temporary username that unties a username swap.
import type { OutgoingMessage, SyncStop } from "../platform/messages.ts";

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
