import { describe, expect, it } from "vitest";
import type { SyncStop } from "../../src/platform/messages.ts";
import { createCycleTally } from "../../src/sync/cycle-tally.ts";
import type { DirectorySyncProgress } from "../../src/sync/directory-sync-types.ts";

const refusal: SyncStop = {
  message: { kind: "create", uuid: "u1", fields: ["username"] },
  attempt: 1,
  status: 409,
  durationMs: 2,
};
const ended = { completed: true, refused: 0, refusals: [], held: () => 0 };

describe("createCycleTally", () => {
  it("counts every skipped entry and lists the first 100, across reads", () => {
    const tally = createCycleTally("initial", undefined);
    const entries = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        dn: `cn=${from + index}`,
        reason: "no uuid",
      }));
    tally.skip(entries(0, 60));
    tally.skip(entries(60, 60));
    const report = tally.report({}, ended);
    expect(report.skipped).toBe(120);
    expect(report.skippedEntries).toHaveLength(100);
    expect(report.skippedEntries[99]).toEqual({ dn: "cn=99", reason: "no uuid" });
  });

  it("adds up the accounts each read reports, and names only those reported", () => {
    const tally = createCycleTally("update", undefined);
    tally.countAccounts({ disabled: 2 });
    tally.countAccounts({ disabled: 3, nonUsers: 1 });
    tally.countAccounts({});
    expect(tally.report({}, ended)).toMatchObject({ disabled: 5, nonUsers: 1 });
    const plain = createCycleTally("update", undefined).report({}, ended);
    expect("disabled" in plain || "nonUsers" in plain).toBe(false);
  });

  it("shows the progress callback a copy, not the live counts", () => {
    const seen: DirectorySyncProgress[] = [];
    const tally = createCycleTally("initial", (progress) => seen.push(progress));
    tally.progress.created++;
    tally.notify();
    tally.progress.created++;
    tally.notify();
    expect(seen.map((progress) => progress.created)).toEqual([1, 2]);
  });

  it("counts a refusal and a stop among the failed, and reports neither as complete", () => {
    const tally = createCycleTally("update", undefined);
    const outcomes = [
      { stoppedAt: refusal },
      { directoryError: "down" },
      { deleteGuard: { deletes: 9, held: 10, message: "no" } },
    ];
    for (const outcome of outcomes) {
      const report = tally.report(outcome, {
        ...ended,
        completed: false,
        refused: 2,
        refusals: [refusal],
      });
      expect(report).toMatchObject({ ...outcome, completed: false, refused: 2, failed: 3 });
      expect(report.refusals).toEqual([refusal]);
    }
    expect(tally.report({}, { ...ended, refused: 2 }).failed).toBe(2);
    expect(tally.report({}, ended).failed).toBe(0);
  });

  it("after a completed read of the changes only, counts every user the application holds that needed no message", () => {
    const tally = createCycleTally("update", undefined);
    tally.read = "content-sync";
    tally.progress.created = 1;
    tally.progress.modified = 2;
    tally.progress.unchanged = 0;
    expect(tally.report({}, { ...ended, held: () => 10 }).unchanged).toBe(7);
    // Not complete, or a full read: the cycle's own count stands, and the state is not asked.
    const asked = () => {
      throw new Error("held() asked");
    };
    expect(tally.report({}, { ...ended, completed: false, held: asked }).unchanged).toBe(0);
    tally.read = "full";
    tally.progress.unchanged = 4;
    expect(tally.report({}, { ...ended, held: asked }).unchanged).toBe(4);
  });

  it("reports how the directory was read, the note only when there is one, and no running counts", () => {
    const tally = createCycleTally("update", undefined);
    tally.progress.read = 5;
    tally.progress.total = 9;
    const full = tally.report({}, ended);
    expect(full).toMatchObject({ mode: "update", read: "full" });
    expect("readNote" in full).toBe(false);
    tally.read = "dirsync";
    tally.readNote = "the cookie expired";
    const partial = tally.report({}, ended);
    expect(partial).toMatchObject({ read: "dirsync", readNote: "the cookie expired" });
    // `read` is how the directory was read, not the progress's count; `total` is progress only.
    expect("total" in partial).toBe(false);
    expect(Number.isInteger(partial.durationMs) && partial.durationMs >= 0).toBe(true);
  });
});
