// The Audit client's OpenTelemetry metrics, read from stats() when the SDK collects.
import type { BatchObservableResult } from "@opentelemetry/api";
import { onOpenTelemetry, scopeOf } from "../../internal/telemetry.ts";
import type { AuditDropReason, AuditStats } from "./audit-types.ts";

/**
 * The audit client's figures as OpenTelemetry metrics, read from `stats()` when the SDK collects
 * (observable instruments), so that `record()` pays nothing for them: queue depth in events and
 * bytes, and the delivered, retried and dropped (by reason) counts. Returns the unregistration,
 * for `close()`.
 */
export function observeAuditStats(stats: () => AuditStats): () => void {
  return onOpenTelemetry((api) => {
    const { meter } = scopeOf(api);
    const events = meter.createObservableGauge("platform_integration.audit.queue.events", {
      description: "Audit events queued or being delivered.",
      unit: "{event}",
    });
    const bytes = meter.createObservableGauge("platform_integration.audit.queue.bytes", {
      description: "Bytes of JSON held by queued and in-flight audit events.",
      unit: "By",
    });
    const delivered = meter.createObservableCounter("platform_integration.audit.delivered", {
      description: "Audit events the Integration API accepted.",
      unit: "{event}",
    });
    const retried = meter.createObservableCounter("platform_integration.audit.retried", {
      description: "Audit delivery attempts that failed and were retried.",
      unit: "{attempt}",
    });
    const dropped = meter.createObservableCounter("platform_integration.audit.dropped", {
      description: "Audit events dropped, by reason (each was reported to onDrop).",
      unit: "{event}",
    });
    const observe = (result: BatchObservableResult) => {
      const now = stats();
      result.observe(events, now.queued + now.inFlight);
      result.observe(bytes, now.bytes);
      result.observe(delivered, now.delivered);
      result.observe(retried, now.retried);
      for (const [reason, count] of Object.entries(now.droppedByReason)) {
        result.observe(dropped, count, {
          "platform_integration.audit.drop_reason": reason as AuditDropReason,
        });
      }
    };
    const observables = [events, bytes, delivered, retried, dropped];
    meter.addBatchObservableCallback(observe, observables);
    return () => meter.removeBatchObservableCallback(observe, observables);
  });
}
