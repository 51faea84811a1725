import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SpoolLockedError } from "../../../../src/clients/audit/spool/spool-lock.ts";
import { startNode } from "./node-child.ts";
import { openSpool, tempDir } from "./spool-helpers.ts";

const holdSpool = (dir: string) => `
  const { Spool } = await import(src + "clients/audit/spool/spool.ts");
  Spool.open({
    dir: ${JSON.stringify(dir)}, maxEvents: 10, maxBytes: 10000, segmentBytes: 10000,
    maxRecordBytes: 1000, commitDelayMs: 0,
    onDurable() {}, onFailed() {}, onSkipped() {},
  });
  console.log("holding");
  setInterval(() => {}, 1000);
`;

describe("the spool's lock", () => {
  it("refuses a second process while the first runs, and lets the next one in once it was killed", async () => {
    const dir = tempDir();
    const holder = startNode(holdSpool(dir));
    await holder.line((line) => line === "holding");

    const refusal = (() => {
      try {
        openSpool(dir);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(SpoolLockedError);
    expect(refusal).toMatchObject({ dir, holder: { pid: holder.pid, host: hostname() } });
    expect((refusal as Error).message).toContain(`in use by process ${holder.pid}`);
    expect((refusal as Error).message).toContain("Give each process its own spool directory");

    holder.kill("SIGKILL");
    await holder.exited;
    const { spool } = openSpool(dir);
    expect(JSON.parse(readFileSync(join(dir, "lock"), "utf8"))).toMatchObject({ pid: process.pid });
    spool.closeSync();
  });

  it("refuses a second client of the same directory in one process, and frees it on close", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir);
    expect(() => openSpool(dir)).toThrow(/another audit client of this process/);
    await spool.close();
    expect(() => openSpool(dir)).not.toThrow();
  });

  it("takes over a lock of its own pid left by an earlier life of the process (a container restart)", () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "lock"),
      JSON.stringify({ pid: process.pid, host: hostname(), token: "old" }),
    );
    expect(() => openSpool(dir)).not.toThrow();
  });

  it("respects another host's lock while it is refreshed, and takes it over once it went stale", () => {
    const dir = tempDir();
    const lock = join(dir, "lock");
    writeFileSync(lock, JSON.stringify({ pid: 1, host: "replica-b", token: "b" }));
    expect(() => openSpool(dir)).toThrow(
      /in use by process 1 on replica-b \(its lock was refreshed \d+ s ago\)/,
    );
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(lock, twoMinutesAgo, twoMinutesAgo);
    expect(() => openSpool(dir)).not.toThrow();
    expect(JSON.parse(readFileSync(lock, "utf8"))).toMatchObject({
      pid: process.pid,
      host: hostname(),
    });
  });

  it("treats an unreadable lock file (torn by a crash) as nobody's", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "lock"), '{"pid": 12');
    expect(() => openSpool(dir)).not.toThrow();
  });
});
