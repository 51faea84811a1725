import { describe, expect, it } from "vitest";
import { startNode } from "./node-child.ts";
import { openSpool, takeAll, tempDir } from "./spool-helpers.ts";

describe("the spool on a full disk", () => {
  it("drops what it cannot write as spool_full to onDrop, never confirms it, and keeps all it confirmed", async () => {
    const dir = tempDir();
    // `ulimit -f 64`: no file of the child may pass 64 KiB, so each segment's writes fail with
    // EFBIG at that size (the failure a full disk gives as ENOSPC), part-way through a batch.
    const child = startNode(
      `
      const { createAuditClient } = await import(src + "clients/audit/index.ts");
      const failed = [];
      const reasons = new Set();
      const down = "http://127.0.0.1:9"; // discard port: nothing listens, the API is down
      const audit = createAuditClient({
        baseUrl: down, spool: ${JSON.stringify(dir)}, onError() {},
        retry: { baseDelayMs: 60000, maxDelayMs: 60000 },
        onDrop(drop) { failed.push(...drop.events.map((event) => JSON.stringify(event))); reasons.add(drop.reason); },
      });
      const confirmed = [];
      for (let round = 0; round < 30; round++) {
        const bodies = Array.from({ length: 100 }, (_, i) => JSON.stringify({ action: "a." + (round * 100 + i) }));
        for (const body of bodies) audit.record(JSON.parse(body));
        if (await audit.persisted()) confirmed.push(...bodies);
      }
      await audit.close({ timeoutMs: 0 });
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
