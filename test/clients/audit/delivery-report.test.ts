import { describe, expect, it } from "vitest";
import type { AuditDrop } from "../../../src/clients/audit/audit-types.ts";
import { DeliveryReport } from "../../../src/clients/audit/delivery-report.ts";

describe("DeliveryReport", () => {
  it("reports drops noticed in one task once per reason, after the task, and counts them", async () => {
    const drops: AuditDrop[] = [];
    const report = new DeliveryReport({ onDrop: (drop) => drops.push(drop), onError: () => {} });
    report.dropLater("overflow", { action: "a.1" });
    report.dropLater("overflow", { action: "a.2" });
    report.dropLater("closed", { action: "a.3" });
    expect(drops).toEqual([]);
    await Promise.resolve();
    expect(drops.map(({ reason, count }) => [reason, count])).toEqual([
      ["overflow", 2],
      ["closed", 1],
    ]);
    const counts = report.counts();
    expect(counts).toMatchObject({ dropped: 3, delivered: 0, retried: 0 });
    expect(counts.droppedByReason).toMatchObject({ overflow: 2, closed: 1 });
    // A copy: later drops do not change a count already read.
    report.drop("rejected", [{ action: "a.4" }]);
    expect(counts.droppedByReason.rejected).toBe(0);
  });

  it("counts a retried failure, tells onError, and keeps the last error", () => {
    const errors: unknown[] = [];
    const report = new DeliveryReport({ onDrop: () => {}, onError: (error) => errors.push(error) });
    report.retried(new Error("first"));
    report.failed(new Error("stopped"));
    expect(errors).toHaveLength(2);
    expect(report.counts()).toMatchObject({ retried: 1, lastError: { message: "stopped" } });
  });
});
