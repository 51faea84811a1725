// The audit event as the Audit API receives it, one home for the in-memory client and the
// pg-boss one (its only import from this folder): the event's type, its admission (checks, the
// catalogue, the size cap: `auditEventEncoder`), its JSON both ways, and its route with the
// delivery loop every background sender runs (`deliverAuditEvent`).
import { atLeastOne } from "../integration-api/client-options.ts";
import { type DeliveryOutcome, deliverUntilSettled } from "../integration-api/delivery-failure.ts";
import type { IntegrationApi } from "../integration-api/http.ts";
import {
  type AuditEventField,
  auditEventFields,
  auditEventWireNames,
} from "./audit-event-schema.ts";

/** The Audit API's route: every event is a POST of its JSON there. */
export const auditEventPath = "/audit/v1/event";

/**
 * One entry of the platform's audit log (POST /audit/v1/event), in camelCase; it is sent with the
 * wire names `name`, `title`, `description`, `ip_address` and `action` (audit-event-schema.ts).
 * The platform marks no field required; this SDK requires `action`, the machine-readable name
 * that the console searches.
 */
export interface AuditEvent<Action extends string = string> {
  /** The machine-readable name, short and dotted: `user.login.success`. Keep a catalogue of them (`defineAuditActions`). */
  action: Action;
  /** The event's name, for example `user.login`. */
  name?: string | undefined;
  /** A human-readable title, for example `User Login Success`. */
  title?: string | undefined;
  /** What happened, for example `john@example.com logged in successfully`. */
  description?: string | undefined;
  /** The address of the user who acted; `clientIp()` reads it from a request safely. */
  ipAddress?: string | undefined;
}

const optionalFields = auditEventFields.filter((field) => field !== "action");
/** [TypeScript name, wire name], in the order sent: computed once, used by every `record()`. */
const wireFields = auditEventFields.map((field) => [field, auditEventWireNames[field]] as const);
const nonAscii = /[\u0080-\uffff]/;

/** An event as sent: its wire JSON, and that JSON's size in UTF-8 bytes. */
export interface EncodedAuditEvent {
  body: string;
  bytes: number;
}

/**
 * Checks an event and serializes it with its wire names: the one serialization of its life, whose
 * length also sizes it. Only types are checked, so that recording stays cheap.
 *
 * @throws TypeError when the event is not an object, `action` is not a non-empty string, `action`
 * is outside `actions` (when given) or another field is neither a string nor undefined.
 * @throws RangeError when its JSON is over `maxBytes`.
 */
export function encodeAuditEvent(
  event: AuditEvent,
  actions: ReadonlySet<string> | undefined,
  maxBytes: number,
): EncodedAuditEvent {
  if (typeof event !== "object" || event === null) {
    throw new TypeError(
      `An audit event is an object with at least an action, got ${event === null ? "null" : typeof event}.`,
    );
  }
  const { action } = event;
  if (typeof action !== "string" || action === "") {
    throw new TypeError(
      `An audit event needs an action, a non-empty string such as "user.login.success"; got ${describe(action)}.`,
    );
  }
  if (actions !== undefined && !actions.has(action)) {
    throw new TypeError(
      `The audit action ${JSON.stringify(action)} is not in the client's catalogue of actions: add it there.`,
    );
  }
  for (const field of optionalFields) {
    const value = event[field];
    if (value !== undefined && typeof value !== "string") {
      throw new TypeError(`The audit event's ${field} must be a string, got ${describe(value)}.`);
    }
  }
  const wire: Record<string, string | undefined> = {};
  for (const [field, wireName] of wireFields) wire[wireName] = event[field];
  const body = JSON.stringify(wire);
  const bytes = utf8Length(body);
  if (bytes > maxBytes) {
    throw new RangeError(
      `This audit event is ${bytes} bytes of JSON, over maxEventBytes (${maxBytes}): shorten its description or raise maxEventBytes.`,
    );
  }
  return { body, bytes };
}

/** What decides which events a client admits: its catalogue of actions and its largest event. */
export interface AuditEventRules {
  /** The catalogue from `defineAuditActions`: events must then use one of its actions. */
  actions?: Readonly<Record<string, string>> | undefined;
  /** The largest event, in bytes of JSON. Default 16 KiB. */
  maxEventBytes?: number | undefined;
}

/**
 * Reads a client's event rules once and returns the check-and-serialize its `record()` calls:
 * {@link encodeAuditEvent} under that catalogue and size cap.
 *
 * @throws TypeError when `maxEventBytes` is not a whole number of at least 1.
 */
export function auditEventEncoder(
  rules: AuditEventRules,
): (event: AuditEvent) => EncodedAuditEvent {
  const actions =
    rules.actions === undefined ? undefined : new Set<string>(Object.values(rules.actions));
  const maxBytes = atLeastOne("maxEventBytes", rules.maxEventBytes, 16 * 1024);
  return (event) => encodeAuditEvent(event, actions, maxBytes);
}

/**
 * Sends an event's JSON until it is settled, under the API's retry policy: the one delivery of
 * the in-memory client's slots and of the pg-boss workers (see `deliverUntilSettled`).
 */
export function deliverAuditEvent(
  api: IntegrationApi,
  body: string,
  { signal, onRetry }: { signal: AbortSignal; onRetry: (error: unknown) => void },
): Promise<DeliveryOutcome> {
  return deliverUntilSettled(
    () => api.request("POST", auditEventPath, { json: body, retry: false, signal }),
    { policy: api.options.retry, signal, onRetry },
  );
}

/** An event back from its wire JSON, for drop reports. */
export function decodeAuditEvent(body: string): AuditEvent {
  const wire = JSON.parse(body) as Record<string, string | undefined>;
  const event: [AuditEventField, string][] = [];
  for (const [field, wireName] of wireFields) {
    const value = wire[wireName];
    if (value !== undefined) event.push([field, value]);
  }
  return Object.fromEntries(event) as unknown as AuditEvent;
}

/** The UTF-8 size of `text`, without encoding it (the ASCII case is its length). */
export function utf8Length(text: string): number {
  if (!nonAscii.test(text)) return text.length;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && isLowSurrogate(text.charCodeAt(index + 1))) {
      // A surrogate pair: one four-byte character.
      bytes += 4;
      index++;
    } else bytes += 3; // a lone surrogate is encoded as U+FFFD, three bytes
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code < 0xe000;
}

function describe(value: unknown): string {
  return value === null ? "null" : typeof value === "string" ? "an empty string" : typeof value;
}
