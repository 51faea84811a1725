import type { JsonValue } from "type-fest";
import type {
  ProvisioningAnswer,
  ProvisioningCall,
  ProvisioningTarget,
} from "../platform/provisioning-api-client.ts";
import type { UserRecord } from "../users/user-record.ts";

/**
 * What a check wants of an answer: an exact status, any 2xx, anything but 2xx, or any answer at
 * all (the check then judges it itself).
 */
export type Want = number | "2xx" | "not 2xx" | "any";

/** Every name the suite gives a test user starts with it, and every email is at example.invalid. */
export const testPrefix = "conformance";

/** What a check can do; the runner in conformance.ts implements it. */
export interface Session {
  /** A uuid no other run uses (with `text` in it); the runner deletes it after the check. */
  uuid(text?: string): string;
  /** Registers a uuid made elsewhere (the generator's) for the same clean-up. */
  track(uuid: string): void;
  /** Sends a call and fails the check unless the answer is `want`. Resolves with the answer. */
  call(label: string, request: ProvisioningCall, want: Want): Promise<ProvisioningAnswer>;
  /** With readUser: reads back the `present` users as sent, and the `gone` ones gone. */
  stored(present: UserRecord[], gone?: string[]): Promise<void>;
  /** A step that the check judges itself. */
  step(expected: string, actual: string, passed: boolean): void;
  /** Ends the check as a warning: passed, printed with `advice`. */
  warn(expected: string, actual: string, advice: string): never;
  target: ProvisioningTarget;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One check of the suite. */
export interface Check {
  name: string;
  /** Where the rule comes from: a section of the spec, the platform's behaviour, or the SDK. */
  rule: string;
  /** Whether the name claims an effect on the stored user, which only readUser can verify. */
  effects: boolean;
  run(session: Session): Promise<void>;
}

export const create = (body: unknown): ProvisioningCall => ({
  method: "POST",
  path: "/v1/user/create",
  body: JSON.stringify(body),
});
export const modify = (body: unknown): ProvisioningCall => ({
  method: "POST",
  path: "/v1/user/modify",
  body: JSON.stringify(body),
});
export const remove = (uuid: string): ProvisioningCall => ({
  method: "DELETE",
  path: `/v1/user/${encodeURIComponent(uuid)}`,
});

/** One line for an answer: its status and the start of its body, or why none came. */
export function describeAnswer(answer: ProvisioningAnswer): string {
  if (answer.status === undefined) {
    return answer.timedOut ? oneLine(answer.error) : `no answer (${oneLine(answer.error)})`;
  }
  return answer.body === undefined
    ? String(answer.status)
    : `${answer.status} ${short(answer.body)}`;
}

/** A body in at most 80 characters, on one line. */
export function short(body: JsonValue | undefined): string {
  const text = oneLine(typeof body === "string" ? body : JSON.stringify(body ?? ""));
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * Text from the network made safe for one line of a terminal: whitespace runs become one space
 * and other control characters are escaped, so that no server's body breaks a report's layout.
 */
export function oneLine(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(
      /[\p{Cc}\u2028\u2029]/gu,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
}
