// The platform's messages to a Provisioning API: their kinds, success statuses, requests, summaries
// and the stop a failed one makes.
import type { JsonValue } from "type-fest";
import type { ProvisioningCall } from "./provisioning-api-client.ts";

/** The platform's calls: the four of spec 4.1, and `POST /v1/reset` before a full re-sync. */
export type MessageKind = "ping" | "create" | "modify" | "delete" | "reset";

/** A message to send: a user record in wire form for create and modify, a uuid for delete. */
export interface OutgoingMessage {
  kind: MessageKind;
  uuid?: string;
  body?: Record<string, JsonValue>;
  /** How many times it was sent so far, across cycles; the engine counts up. */
  attempts: number;
}

/**
 * A message as reports show it: the wire names of the fields it carried, never their values, so
 * that a report can be printed or snapshotted without leaking a password.
 */
export interface MessageSummary {
  kind: MessageKind;
  uuid?: string;
  fields?: string[];
}

/** One answer that counted as success. */
export interface Delivery {
  message: MessageSummary;
  status: number;
  durationMs: number;
  /** 1 for the first time this message was sent; more after a failure or a duplicate. */
  attempt: number;
}

/** Why a cycle stopped before its end: the message it stopped at and what came back. */
export interface SyncStop {
  message: MessageSummary;
  attempt: number;
  /** The status, when the application answered one other than the expected. */
  status?: number;
  /** The error body (parsed JSON when it parses), with the message's password redacted. */
  body?: JsonValue;
  /** Set when no answer arrived: a network error, a time-out, an abort, or one a test made up. */
  error?: string;
  /** Set when retrying cannot fix it: the application's certificate is not trusted. */
  fatal?: true;
  durationMs: number;
}

/**
 * A failure to reach the Provisioning API that retrying cannot fix (its certificate is not
 * trusted): the directory sync's `syncOnce` and `run` reject with it, once, instead of meeting it
 * again every cycle. Its message says the fix.
 */
export class TargetError extends Error {
  override readonly name = "TargetError";
  readonly fatal = true;
}

/** The one status the spec counts as success for each call; any other stops the cycle. */
export const successStatus: Record<MessageKind, number> = {
  ping: 204,
  create: 201,
  modify: 204,
  delete: 204,
  reset: 204,
};

/**
 * The body of a modify from one wire record to the next: uuid and the fields whose value differs,
 * `null` for a field that is gone. Undefined when nothing changed (an entry saved unchanged).
 */
export function changedFields(
  before: Record<string, JsonValue>,
  after: Record<string, JsonValue>,
): Record<string, JsonValue> | undefined {
  const changed: [string, JsonValue][] = [["uuid", after.uuid ?? null]];
  for (const name of Object.keys(before)) {
    if (!Object.hasOwn(after, name)) changed.push([name, null]);
    else if (!sameValue(before[name] as JsonValue, after[name] as JsonValue)) {
      changed.push([name, after[name] as JsonValue]);
    }
  }
  for (const name of Object.keys(after)) {
    if (!Object.hasOwn(before, name)) changed.push([name, after[name] as JsonValue]);
  }
  // Object.fromEntries keeps a field named `__proto__` an own, plain key.
  return changed.length > 1 ? Object.fromEntries(changed) : undefined;
}

/**
 * Whether two JSON values are equal. Strings and numbers, nearly every field, compare as they
 * are: an update cycle compares every field of every user, and rendering each as JSON to compare
 * it made two strings a field.
 */
function sameValue(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  return typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b);
}

/** The HTTP request of a message, with the uuid percent-encoded into the delete's path. */
export function toRequest(message: OutgoingMessage): ProvisioningCall {
  switch (message.kind) {
    case "ping":
      return { method: "GET", path: "/v1/ping" };
    case "reset":
      return { method: "POST", path: "/v1/reset" };
    case "delete":
      return { method: "DELETE", path: `/v1/user/${encodeURIComponent(message.uuid ?? "")}` };
    default:
      return {
        method: "POST",
        path: `/v1/user/${message.kind}`,
        body: JSON.stringify(message.body),
      };
  }
}

/** The kind of message a request carries: the inverse of {@link toRequest}. */
export function kindOfRequest({ method, path }: ProvisioningCall): MessageKind {
  if (method === "GET") return "ping";
  if (method === "DELETE") return "delete";
  if (path === "/v1/reset") return "reset";
  return path === "/v1/user/modify" ? "modify" : "create";
}

/** The message without values: what reports and logs may show. */
export function summarize({ kind, uuid, body }: OutgoingMessage): MessageSummary {
  return {
    kind,
    ...(uuid !== undefined && { uuid }),
    ...(body && { fields: Object.keys(body).filter((name) => name !== "uuid") }),
  };
}
