import type { JsonValue } from "type-fest";
import type { ProvisioningAnswer, ProvisioningCall } from "./provisioning-target.ts";

/** The platform's calls: the four of spec 4.1, and `POST /v1/reset` before a full re-sync. */
export type MessageKind = "ping" | "create" | "modify" | "delete" | "reset";

/**
 * A message as reports show it: the wire names of the fields it carried, never their values, so
 * that a report can be printed or snapshotted without leaking a password.
 */
export interface MessageSummary {
  kind: MessageKind;
  uuid?: string;
  fields?: string[];
}

/** Why a cycle stopped before its end: the message it stopped at and what came back. */
export interface SyncStop {
  message: MessageSummary;
  attempt: number;
  /** The status, when the application answered one other than the expected. */
  status?: number;
  /** The error body (parsed JSON when it parses), with the message's password redacted. */
  body?: JsonValue;
  /** Set when no answer arrived: a network error, a time-out, an abort or an injected fault. */
  error?: string;
  durationMs: number;
}

/** A message the platform owes the application, and how often it was sent. */
export interface Message {
  kind: MessageKind;
  uuid?: string;
  body?: Record<string, JsonValue>;
  attempts: number;
}

/** The status that acknowledges each kind of message: anything else stops the cycle. */
export const successStatus: Record<MessageKind, number> = {
  ping: 204,
  create: 201,
  modify: 204,
  delete: 204,
  reset: 204,
};

/** The HTTP call for a message. */
export function toRequest(message: Message): ProvisioningCall {
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

/** A message as reports show it: field names, never values. */
export function summarize({ kind, uuid, body }: Message): MessageSummary {
  return {
    kind,
    ...(uuid !== undefined && { uuid }),
    ...(body && { fields: Object.keys(body).filter((name) => name !== "uuid") }),
  };
}

/** Where a cycle stopped, with the message's password redacted from the answer's body. */
export function toStop(message: Message, answer: ProvisioningAnswer, attempt: number): SyncStop {
  const { durationMs } = answer;
  if (answer.error !== undefined) {
    return { message: summarize(message), attempt, error: answer.error, durationMs };
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
