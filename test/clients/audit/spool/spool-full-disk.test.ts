import { describe, expect, it } from "vitest";
import { openSpool, startNode, takeAll, tempDir } from "./spool-helpers.ts";

describe("the spool on a full disk", () => {
  it("drops what it cannot write as spool_full, never confirms it, and keeps everything it confirmed", async () => {
    const dir = tempDir();
    // `ulimit -f 64`: no file of the child may pass 64 KiB, so each segment's writes fail with
    // EFBIG at that size (the failure a full disk gives as ENOSPC), part-way through a batch.
    const child = startNode(
      `
      const { Spool } = await import(src + "clients/audit/spool/spool.ts");
      const failed = [];
      const reasons = new Set();
      const spool = Spool.open({
        dir: ${JSON.stringify(dir)}, maxEvents: 1e6, maxBytes: 1e9, segmentBytes: 1 << 20,
        maxRecordBytes: 1000, commitDelayMs: 0,
        onDurable() {},
        onFailed(bodies, reason) { failed.push(...bodies); reasons.add(reason); },
        onSkipped() {},
      });
      const confirmed = [];
      for (let round = 0; round < 30; round++) {
        const bodies = Array.from({ length: 100 }, (_, i) => JSON.stringify({ action: "a." + (round * 100 + i) }));
        for (const body of bodies) spool.append(body, body.length);
        if (await spool.persisted()) confirmed.push(...bodies);
      }
      await spool.close();
      console.log(JSON.stringify({ confirmed, failed, reasons: [...reasons] }));
      `,
      { fileSizeKiB: 64 },
    );
    const { code, stdout, stderr } = await child.exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const report = JSON.parse(stdout) as {
      confirmed: string[];
      failed: string[];
      reasons: string[];
    };
    expect(report.reasons).toEqual(["spool_full"]);
    expect(report.failed.length).toBeGreaterThan(0);

    const onDisk = takeAll(openSpool(dir).spool);
    const all = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ action: `a.${i}` }));
    // Every record is on disk or was reported dropped: none of both, none of neither.
    expect([...onDisk, ...report.failed].sort()).toEqual([...all].sort());
    const kept = new Set(onDisk);
    expect(report.confirmed.filter((body) => !kept.has(body))).toEqual([]);
    expect(report.confirmed.length).toBeGreaterThan(0);
  });
});
