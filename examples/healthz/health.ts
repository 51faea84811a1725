// A /healthz route for an application that serves the Provisioning API and writes audit events:
// both parts' health figures in one JSON answer, 503 when either needs someone's attention.
import type { AuditClient, AuditStats } from "platform-integration/audit";
import type { ProvisioningHandler, ProvisioningStats } from "platform-integration/provisioning";

/** What /healthz answers. */
export interface HealthReport {
  status: "ok" | "degraded";
  /** Why the status is `degraded`, one line each. */
  problems: string[];
  provisioning: ProvisioningStats;
  audit: AuditStats;
}

/** When the figures call for attention. */
export interface HealthLimits {
  /** The audit client's `maxQueueEvents`: a queue above `queueAlarm` of it is a problem. */
  maxQueueEvents: number;
  /** The share of the queue that is an alarm. Default 0.8. */
  queueAlarm?: number;
  /** How long a provisioning answer of 503 (the store failing) stays a problem. Default 5 min. */
  storeErrorWindowMs?: number;
  now?: () => number;
}

/**
 * Reads both clients' `stats()`; degraded when audit delivery stopped on a configuration error
 * (an untrusted certificate: retrying cannot fix it), when the audit queue fills up (the API is
 * unreachable: events will soon be dropped), or when the user store failed recently (the platform
 * retries, but the sync is paused).
 */
export function healthReport(
  provisioning: Pick<ProvisioningHandler, "stats">,
  audit: Pick<AuditClient, "stats">,
  limits: HealthLimits,
): HealthReport {
  const now = limits.now ?? Date.now;
  const provisioningStats = provisioning.stats();
  const auditStats = audit.stats();
  const problems: string[] = [];
  if (auditStats.configurationError !== undefined) {
    problems.push(`audit delivery stopped: ${auditStats.configurationError}`);
  }
  const depth = auditStats.queued + auditStats.inFlight;
  if (depth > limits.maxQueueEvents * (limits.queueAlarm ?? 0.8)) {
    problems.push(`audit queue at ${depth} of ${limits.maxQueueEvents} events`);
  }
  const lastError = provisioningStats.lastError;
  const window = limits.storeErrorWindowMs ?? 5 * 60_000;
  if (lastError?.status === 503 && now() - Date.parse(lastError.at) < window) {
    problems.push(`the user store failed at ${lastError.at} (${lastError.code})`);
  }
  return {
    status: problems.length === 0 ? "ok" : "degraded",
    problems,
    provisioning: provisioningStats,
    audit: auditStats,
  };
}

/** The /healthz answer: 200 when ok, 503 when degraded, the report as JSON. */
export function healthz(
  provisioning: Pick<ProvisioningHandler, "stats">,
  audit: Pick<AuditClient, "stats">,
  limits: HealthLimits,
): { status: 200 | 503; body: string } {
  const report = healthReport(provisioning, audit, limits);
  return { status: report.status === "ok" ? 200 : 503, body: JSON.stringify(report) };
}
