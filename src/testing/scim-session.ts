import type { JsonValue } from "type-fest";
import { short } from "./conformance-session.ts";
import type { ScimAnswer, ScimCall } from "./scim-client.ts";

/** The schema URNs the checks send and look for (RFC 7643 §8.7, RFC 7644 §3.12, §3.5.2). */
export const urn = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  enterprise: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
} as const;

/** What a SCIM check wants of an answer's status: one, one of several, any 2xx, or anything. */
export type ScimWant = number | readonly number[] | "2xx" | "any";

/** What a SCIM check can do; the runner in scim-conformance.ts implements it. */
export interface ScimSession {
  /** Sends a call; fails the check unless its status is `want`. */
  call(label: string, call: ScimCall, want: ScimWant): Promise<ScimAnswer>;
  /** A step that the check judges itself. */
  step(expected: string, actual: string, passed: boolean): void;
  /** Ends the check as a warning: passed, printed with `advice`. */
  warn(expected: string, actual: string, advice: string): never;
  /** A value no other user, run or check uses, with `text` in it: for userNames and emails. */
  mark(): string;
  /** Registers a user's SCIM id, which the runner deletes after the check. */
  track(id: string): void;
  /** Whether the run has a token, so that a wrong one can be tried. */
  hasToken: boolean;
}

/** One SCIM check. */
export interface ScimCheck {
  name: string;
  /** Where the rule comes from: an RFC section, a vendor's documented sequence. */
  rule: string;
  run(session: ScimSession): Promise<void>;
}

/** A JSON object, or undefined when the value is none. */
export function asObject(value: JsonValue | undefined): Record<string, JsonValue> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, JsonValue>)
    : undefined;
}

/**
 * An attribute of a SCIM resource by its path (`name.familyName`, or a URN-qualified one such as
 * `urn:…:enterprise:2.0:User:department`), names matched case-insensitively as RFC 7643 §2.1 says.
 */
export function attribute(resource: JsonValue | undefined, path: string): JsonValue | undefined {
  let current = asObject(resource);
  let rest = path;
  const extension = [urn.enterprise, urn.user].find((schema) =>
    path.toLowerCase().startsWith(`${schema.toLowerCase()}:`),
  );
  if (extension !== undefined) {
    rest = path.slice(extension.length + 1);
    if (extension === urn.enterprise) current = asObject(own(current, extension));
  }
  const names = rest.split(".");
  let value: JsonValue | undefined = current;
  for (const name of names) {
    value = own(asObject(value), name);
    if (value === undefined) return undefined;
  }
  return value;
}

function own(object: Record<string, JsonValue> | undefined, name: string): JsonValue | undefined {
  if (object === undefined) return undefined;
  const key = Object.keys(object).find((each) => each.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : object[key];
}

/** The value of a user's work email, else of its primary one, else of its first. */
export function workEmail(user: JsonValue | undefined): JsonValue | undefined {
  const emails = attribute(user, "emails");
  if (!Array.isArray(emails)) return undefined;
  const objects = emails.map((email) => asObject(email) ?? {});
  const chosen =
    objects.find((email) => own(email, "type") === "work") ??
    objects.find((email) => own(email, "primary") === true) ??
    objects[0];
  return chosen && own(chosen, "value");
}

/** The JSON text of a value for a report line; `absent` for none. */
export const show = (value: JsonValue | undefined) =>
  value === undefined ? "absent" : short(value);

/** Whether an answer's status is what a check wants. */
export function statusMatches(answer: ScimAnswer, want: ScimWant): boolean {
  if (answer.status === undefined) return false;
  if (want === "any") return true;
  if (want === "2xx") return answer.status >= 200 && answer.status < 300;
  return typeof want === "number" ? answer.status === want : want.includes(answer.status);
}

/** How a {@link ScimWant} reads in a report. */
export function describeWant(want: ScimWant): string {
  if (typeof want === "number" || typeof want === "string") return String(want);
  return want.join(" or ");
}
