import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startNode } from "./node-child.ts";
import { appendAll, bodies, openSpool, takeAll, tempDir } from "./spool-helpers.ts";

/** The bodies a new process reads back from `dir`, by their description. */
function readBack(dir: string): string[] {
  const { spool, events } = openSpool(dir);
  expect(events.skipped).toEqual([]);
  return takeAll(spool).map((body) => JSON.parse(body).description as string);
}

const numbers = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => String(from + index));

/** A child that records through a spooled client whose API is down, then runs `then`. */
function child(dir: string, body: string) {
  return startNode(`
    const { createAuditClient } = await import(src + "clients/audit/index.ts");
    const audit = createAuditClient({
      baseUrl: "http://127.0.0.1:9", spool: ${JSON.stringify(dir)}, onError() {},
      retry: { baseDelayMs: 60000, maxDelayMs: 60000 },
    });
    const record = (from, count) => {
      for (let index = from; index < from + count; index++) audit.record({ action: "exit.test", description: String(index) });
    };
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    ${body}
  `);
}

describe("the spool at a normal exit", () => {
  it("loses none of a group commit's events when process.exit() comes while it is written", async () => {
    for (let ticks = 0; ticks < 4; ticks++) {
      const dir = tempDir();
      const exited = await child(
        dir,
        `record(0, 50); for (let i = 0; i <= ${ticks}; i++) await tick(); record(50, 50); process.exit(0);`,
      ).exited;
      expect(exited).toMatchObject({ code: 0, stderr: "" });
      expect(readBack(dir), `after ${ticks + 1} ticks`).toEqual(numbers(0, 100));
    }
  });

  it("keeps one event recorded just before process.exit(), wherever the commit cycle is", async () => {
    for (let ticks = 0; ticks < 6; ticks++) {
      const dir = tempDir();
      const exited = await child(
        dir,
        `record(0, 10); await audit.persisted(); record(10, 1); for (let i = 0; i < ${ticks}; i++) await tick(); process.exit(0);`,
      ).exited;
      expect(exited).toMatchObject({ code: 0, stderr: "" });
      expect(readBack(dir), `after ${ticks} ticks`).toEqual(numbers(0, 11));
    }
  });

  it("keeps one event recorded just before an uncaught exception", async () => {
    for (let ticks = 0; ticks < 6; ticks++) {
      const dir = tempDir();
      const exited = await child(
        dir,
        `record(0, 10); await audit.persisted(); record(10, 1); for (let i = 0; i < ${ticks}; i++) await tick(); throw new Error("boom");`,
      ).exited;
      expect(exited.code).toBe(1);
      expect(exited.stderr).toMatch(/boom/);
      expect(readBack(dir), `after ${ticks} ticks`).toEqual(numbers(0, 11));
      expect(readdirSync(dir).filter((name) => name.endsWith(".seg")).length).toBeGreaterThan(0);
    }
  });
});

describe("the spool after a crash", () => {
  it("loses no later event when a process was killed between a delivered segment's two unlinks", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(4));
    await first.spool.persisted();
    await first.spool.close();

    // Delivers all four, three acknowledgements reaching the .ack file first; deleting the done
    // segment unlinks its .seg, and the process is killed as it is about to unlink the .ack.
    const killed = await startNode(`
      const fs = process.getBuiltinModule("node:fs");
      const { Spool } = await import(src + "clients/audit/spool/spool.ts");
      const spool = Spool.open({
        dir: ${JSON.stringify(dir)}, maxEvents: 100, maxBytes: 100000, segmentBytes: 100000,
        commitDelayMs: 0, onDurable() {}, onFailed() {}, onSkipped() {},
      });
      const records = spool.take(4);
      for (const record of records.slice(0, 3)) spool.ack(record);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      const rmSync = fs.rmSync;
      fs.rmSync = (path, options) => {
        if (String(path).endsWith(".ack")) process.kill(process.pid, "SIGKILL");
        return rmSync(path, options);
      };
      spool.ack(records[3]);
    `).exited;
    expect(killed.signal).toBe("SIGKILL");
    expect(readdirSync(dir).filter((name) => /\.(seg|ack)$/.test(name))).toEqual([
      "0000000000000001.ack",
    ]);

    // The next process records four events of the same sizes, at the same offsets.
    const next = openSpool(dir);
    appendAll(next.spool, bodies(4, 4));
    await expect(next.spool.persisted()).resolves.toBe(true);
    await next.spool.close();
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(4, 4));
  });
});
