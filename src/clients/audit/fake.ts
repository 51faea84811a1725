// The Audit API's fake: its route and the events received, read by the record the platform
// reads them with (audit-event-schema.ts).

import type { JsonObject } from "type-fest";
import { type FakeRoute, jsonError, readJsonObjectBody } from "../integration-api/fake-answers.ts";
import type { RecordOf } from "../integration-api/wire-record.ts";
import { auditEventRecord } from "./audit-event-schema.ts";

/**
 * An audit event as the fake received it, in camelCase (`auditEventRecord`, the schema the
 * client's wire names come from). Fields the spec does not document are kept under their wire
 * names in `extra`, as plain data.
 */
export interface FakeAuditEvent extends RecordOf<typeof auditEventRecord.shape> {
  extra?: Record<string, unknown>;
}

/**
 * The Audit API (spec section 4.3): `POST /audit/v1/event`, answering `201` with an empty
 * text/plain body; `415` for a body not sent as application/json, `400` for one that is not a
 * JSON object or a documented field that is not a string.
 */
export function createFakeAudit(onAuditEvent?: (event: FakeAuditEvent) => void): {
  readonly events: FakeAuditEvent[];
  routes: FakeRoute[];
  reset(): void;
} {
  let auditEvents: FakeAuditEvent[] = [];
  const recordAuditEvent = async (request: Request): Promise<Response> => {
    if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) {
      return jsonError(
        415,
        "unsupported_media_type",
        "Send the audit event as JSON, with Content-Type: application/json.",
      );
    }
    const body = await readJsonObjectBody(request, {
      error: "invalid_event",
      message: "The audit event must be a JSON object.",
    });
    if (body instanceof Response) return body;
    const { value, problems, extra } = auditEventRecord.read(body as JsonObject);
    // The first field in the body's order that is not a string.
    const refused = new Set(problems.map(({ wireName }) => wireName));
    const bad = Object.keys(body).find((key) => refused.has(key));
    if (bad !== undefined) {
      return jsonError(400, "invalid_event", `The field ${bad} must be a string.`);
    }
    const event: FakeAuditEvent = value;
    // Object.fromEntries defines keys as own data properties: a "__proto__" key stays plain data.
    if (extra.length > 0) event.extra = Object.fromEntries(extra);
    auditEvents.push(event);
    onAuditEvent?.(structuredClone(event));
    return new Response(null, {
      status: 201,
      headers: { "content-type": "text/plain; charset=utf-8", "content-length": "0" },
    });
  };

  return {
    routes: [{ method: "POST", path: "/audit/v1/event", answer: recordAuditEvent }],
    get events() {
      return structuredClone(auditEvents);
    },
    reset() {
      auditEvents = [];
    },
  };
}

/**
 * An event's fields for a line of output, the action first, then the documented fields and
 * those it kept in `extra`, each as `[name, value]`; the action is undefined when it has none.
 */
export function fakeAuditEventFields(event: FakeAuditEvent): {
  action: string | undefined;
  fields: [string, unknown][];
} {
  const { extra, action, ...documented } = event;
  return { action, fields: [...Object.entries(documented), ...Object.entries(extra ?? {})] };
}
