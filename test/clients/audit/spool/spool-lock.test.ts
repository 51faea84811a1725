import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SpoolLockedError } from "../../../../src/clients/audit/spool/spool-lock.ts";
import { startNode } from "./node-child.ts";
import { openSpool, spoolFs, tempDir } from "./spool-helpers.ts";

const fs = spoolFs;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const holdSpool = (dir: string) => `
  const { Spool } = await import(src + "clients/audit/spool/spool.ts");
  Spool.open({
    dir: ${JSON.stringify(dir)}, maxEvents: 10, maxBytes: 10000, segmentBytes: 10000,
    commitDelayMs: 0,
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
    expect((refusal as Error).name).toBe("SpoolLockedError");
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
    expect(() => openSpool(dir)).toThrow(
      expect.objectContaining({ dir, holder: { pid: process.pid, host: hostname() } }),
    );
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

  it("removes its own lock when it closes, and closes when the lock file is already gone", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    await first.spool.close();
    expect(existsSync(join(dir, "lock"))).toBe(false);
    const second = openSpool(dir);
    rmSync(join(dir, "lock"));
    await expect(second.spool.close()).resolves.toBeUndefined();
  });

  it("treats a lock file without a numeric pid and a host name as nobody's", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "lock"), JSON.stringify({ pid: "7", host: "replica-b", token: "b" }));
    expect(() => openSpool(dir)).not.toThrow();
  });

  it("takes over a stale lock that vanished before it could move it, and passes on other errors", () => {
    const dir = tempDir();
    const lock = join(dir, "lock");
    const stale = () => writeFileSync(lock, '{"pid": 12'); // torn: nobody's
    stale();
    vi.spyOn(fs, "renameSync").mockImplementationOnce(() => {
      rmSync(lock); // its holder's clean-up, say
      throw Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
    });
    const { spool } = openSpool(dir);
    spool.closeSync();
    stale();
    const denied = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    vi.spyOn(fs, "renameSync").mockImplementationOnce(() => {
      throw denied;
    });
    expect(() => openSpool(dir)).toThrow(denied);
  });

  it("leaves alone, when it closes, a lock that another host took over meanwhile", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir);
    const theirs = JSON.stringify({ pid: 7, host: "replica-b", token: "b" });
    writeFileSync(join(dir, "lock"), theirs);
    await spool.close();
    expect(readFileSync(join(dir, "lock"), "utf8")).toBe(theirs);
  });

  // Replica C, which wins a race for the lock against this process.
  const winner = JSON.stringify({ pid: 3, host: "replica-c", token: "c" });
  function expectToGiveWay(dir: string) {
    expect(() => openSpool(dir)).toThrow(
      /in use by process 3 on replica-c \(it took the lock over just now\)/,
    );
    expect(() => openSpool(dir)).toThrow(expect.objectContaining({ dir }));
    expect(readFileSync(join(dir, "lock"), "utf8")).toBe(winner);
  }

  it("gives way when another process takes a stale lock over while it does the same", () => {
    const dir = tempDir();
    const lock = join(dir, "lock");
    writeFileSync(lock, JSON.stringify({ pid: 1, host: "replica-b", token: "stale" }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    // Between this process reading the stale lock and moving it aside.
    const rename = fs.renameSync;
    vi.spyOn(fs, "renameSync").mockImplementationOnce((from, to) => {
      writeFileSync(lock, winner);
      rename(from, to);
    });
    expectToGiveWay(dir);
  });

  it("gives way when another process creates the lock between the stale one's removal and its own", () => {
    const dir = tempDir();
    const lock = join(dir, "lock");
    writeFileSync(lock, '{"pid": 12'); // torn: nobody's
    const rm = fs.rmSync;
    vi.spyOn(fs, "rmSync").mockImplementationOnce((path, options) => {
      rm(path, options);
      writeFileSync(lock, winner);
    });
    expectToGiveWay(dir);
  });

  it("passes on an error other than an existing lock file", () => {
    const dir = tempDir();
    const denied = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    vi.spyOn(fs, "writeFileSync").mockImplementationOnce(() => {
      throw denied;
    });
    expect(() => openSpool(dir)).toThrow(denied);
    expect(existsSync(join(dir, "lock"))).toBe(false);
  });

  it("refreshes its lock file's time every 10 s, so that other hosts see it alive", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    vi.setSystemTime(new Date("2030-01-01T00:00:00Z"));
    const dir = tempDir();
    const { spool } = openSpool(dir);
    const mtime = () => statSync(join(dir, "lock")).mtimeMs;
    vi.advanceTimersByTime(9_999);
    expect(mtime()).toBeLessThan(Date.parse("2030-01-01T00:00:00Z"));
    vi.advanceTimersByTime(1);
    expect(mtime()).toBe(Date.parse("2030-01-01T00:00:10Z"));
    // Closed: the heartbeat stops.
    spool.closeSync();
    const utimes = vi.spyOn(fs, "utimesSync");
    vi.advanceTimersByTime(60_000);
    expect(utimes).not.toHaveBeenCalled();
  });
});
