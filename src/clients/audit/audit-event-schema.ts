// The audit event (POST /audit/v1/event), defined once: five optional strings, sent under the
// snake_case of these names. The client writes it on the hot path of `record()` with the wire
// names alone, types checked by hand with messages of their own (audit-event.ts), so the
// `./audit` entry does not bundle zod; the fake Audit API reads it with the zod record below,
// built from the same list and the same naming rule.
import * as z from "zod/mini";
import { wireNamesOf } from "../../internal/wire-names.ts";
import { type RecordShape, wireRecord } from "../integration-api/wire-record.ts";

/** The event's fields, in the order they are sent. */
export const auditEventFields = ["name", "title", "description", "ipAddress", "action"] as const;

/** One of the audit event's fields. */
export type AuditEventField = (typeof auditEventFields)[number];

/** Each field's wire name: `ipAddress` → `ip_address`. */
export const auditEventWireNames = /* @__PURE__ */ wireNamesOf(auditEventFields);

function buildAuditEventRecord() {
  const text = z.exactOptional(z.string());
  const shape = Object.fromEntries(auditEventFields.map((name) => [name, text])) as {
    [Name in AuditEventField]: typeof text;
  } satisfies RecordShape;
  return wireRecord(shape);
}

/**
 * The event as the platform reads it: every field an optional string (the platform marks none
 * required; the SDK's client requires `action`). Built by a pure call, so that a bundle that
 * only writes events (the client's) leaves it, and zod, out.
 */
export const auditEventRecord = /* @__PURE__ */ buildAuditEventRecord();
