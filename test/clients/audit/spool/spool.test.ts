import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { segmentMagic } from "../../../../src/clients/audit/spool/record-format.ts";
import { appendAll, bodies, openSpool, spoolFs, takeAll, tempDir } from "./spool-helpers.ts";

const fs = spoolFs;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const segmentFiles = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith(".seg"))
    .sort();

describe("Spool", () => {
  it("writes records to disk, and a new process reads them back in order", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    const written = bodies(50);
    appendAll(first.spool, written);
    expect(takeAll(first.spool)).toEqual([]); // nothing is handed out before it is durable
    await expect(first.spool.persisted()).resolves.toBe(true);
    expect(first.events.durable).toBeGreaterThan(0);
    await first.spool.close();

    const second = openSpool(dir);
    const bytes = written.reduce((sum, body) => sum + 8 + Buffer.byteLength(body), 0);
    expect(second.spool.stats()).toMatchObject({ events: 50, bytes, pending: 0 });
    expect(takeAll(second.spool)).toEqual(written);
  });

  it("commits every record appended in one tick with one fdatasync, and what comes during it with the next", async () => {
    const { spool } = openSpool(tempDir());
    const fdatasync = vi.spyOn(fs, "fdatasync");
    appendAll(spool, bodies(1000));
    const firstCommit = spool.persisted();
    await new Promise((resolve) => setImmediate(resolve)); // the commit has started
    appendAll(spool, bodies(1000, 1000));
    await expect(spool.persisted()).resolves.toBe(true);
    await expect(firstCommit).resolves.toBe(true);
    expect(fdatasync).toHaveBeenCalledTimes(2);
    expect(takeAll(spool)).toEqual([...bodies(1000), ...bodies(1000, 1000)]);
  });

  it("never hands out a record twice, and after a restart only those not acknowledged", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(6));
    await first.spool.persisted();
    const taken = first.spool.take(4);
    expect(taken.map((record) => record.body)).toEqual(bodies(4));
    expect(takeAll(first.spool)).toEqual(bodies(2, 4));
    first.spool.ack(taken[0]!);
    first.spool.ack(taken[2]!);
    first.spool.ack(taken[2]!); // twice: counted once
    expect(first.spool.stats().events).toBe(4);
    await first.spool.close();

    // An ack torn by a crash (fewer than 4 bytes) is ignored.
    const ackFile = join(dir, segmentFiles(dir)[0]!.replace(".seg", ".ack"));
    appendFileSync(ackFile, Buffer.from([1, 2]));
    const second = openSpool(dir);
    expect(second.spool.stats().events).toBe(4);
    expect(takeAll(second.spool)).toEqual([bodies(6)[1], bodies(6)[3], bodies(6)[4], bodies(6)[5]]);
  });

  it("skips a torn tail and a damaged record, and still reads every whole record around them", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    const written = bodies(5);
    appendAll(first.spool, written);
    await first.spool.persisted();
    await first.spool.close();

    const file = join(dir, segmentFiles(dir)[0]!);
    const data = readFileSync(file);
    const recordBytes = 8 + Buffer.byteLength(written[0]!);
    // Damage one byte of the second record's payload, then append half a record (a torn write).
    data[segmentMagic.length + recordBytes + 10]! ^= 0xff;
    writeFileSync(
      file,
      Buffer.concat([data, data.subarray(segmentMagic.length, segmentMagic.length + 12)]),
    );

    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual([written[0], written[2], written[3], written[4]]);
    expect(second.events.skipped).toEqual([
      { file, offset: segmentMagic.length + recordBytes, bytes: recordBytes },
      { file, offset: data.length, bytes: 12 },
    ]);
    expect(second.spool.stats().events).toBe(4);
  });

  it("rolls over to new segments and deletes each one once all its records are acknowledged", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir, { segmentBytes: 200 });
    for (let round = 0; round < 5; round++) {
      appendAll(spool, bodies(5, round * 5));
      await spool.persisted();
    }
    expect(segmentFiles(dir).length).toBeGreaterThan(2);
    const taken = spool.take(100);
    expect(taken).toHaveLength(25);
    for (const record of taken.slice(0, 20)) spool.ack(record);
    // Every segment but those holding the last five records is gone.
    expect(segmentFiles(dir).length).toBeLessThanOrEqual(2);
    for (const record of taken.slice(20)) spool.ack(record);
    expect(segmentFiles(dir)).toHaveLength(1); // the open one
    expect(spool.stats()).toMatchObject({ events: 0, bytes: 0, segments: 1 });
    appendAll(spool, bodies(1, 99));
    await spool.persisted();
    expect(takeAll(spool)).toEqual(bodies(1, 99));
  });

  it("refuses records past maxEvents or maxBytes, and persisted() then says so", async () => {
    const { spool } = openSpool(tempDir(), { maxEvents: 3 });
    expect(appendAll(spool, bodies(4))).toEqual([true, true, true, false]);
    await expect(spool.persisted()).resolves.toBe(false);
    const [record] = spool.take(1);
    spool.ack(record!);
    expect(appendAll(spool, bodies(1, 4))).toEqual([true]);
    // Conservative: the refusal came after the last record that was durable at the call.
    await expect(spool.persisted()).resolves.toBe(false);
    await expect(spool.persisted()).resolves.toBe(true);

    const small = openSpool(tempDir(), { maxBytes: 2 * (8 + 16) });
    const [body] = bodies(1); // 16 bytes
    expect(appendAll(small.spool, [body!, body!, body!])).toEqual([true, true, false]);
  });

  it("writes what waits for a commit synchronously when the process exits", () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(3));
    const fdatasyncSync = vi.spyOn(fs, "fdatasyncSync");
    first.spool.closeSync();
    expect(fdatasyncSync).toHaveBeenCalledTimes(1);
    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual(bodies(3));
  });

  it("refuses a segment written in another format version rather than guess", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "0000000000000001.seg"), "PIAUDIT9 something else");
    expect(() => openSpool(dir)).toThrow(/is not an audit spool segment of this version/);
    writeFileSync(join(dir, "0000000000000001.seg"), "PIAUDIT9"); // as long as the magic
    expect(() => openSpool(dir)).toThrow(/is not an audit spool segment of this version/);
    // The refused open released its lock.
    writeFileSync(join(dir, "0000000000000001.seg"), segmentMagic);
    expect(() => openSpool(dir)).not.toThrow();
  });

  // Catches: ids parsed with Number(), which above 2^53 makes every new segment reuse one id
  // (EEXIST) and drops what comes after as spool_failed.
  it("numbers segments exactly after a stray one whose id is above 2^53", async () => {
    const dir = tempDir();
    const stray = 2n ** 53n + 1n;
    writeFileSync(join(dir, `${stray}.seg`), segmentMagic);
    const first = openSpool(dir, { segmentBytes: segmentMagic.length + 2 * (8 + 16) });
    const written = bodies(200);
    for (let round = 0; round < 20; round++) {
      appendAll(first.spool, written.slice(round * 10, round * 10 + 10));
      await expect(first.spool.persisted()).resolves.toBe(true);
    }
    await first.spool.close();
    const ids = segmentFiles(dir).map((name) => BigInt(name.slice(0, -".seg".length)));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => id > stray)).toBe(true);
    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual(written);
  });

  // Catches: a pattern of 16 digits or more, under which a stray 00000000000000001.seg was read
  // as id 1 under a name it does not have (ENOENT at open), and a stray name of 251 nines made
  // every next segment's name too long (ENAMETOOLONG at every commit).
  it("leaves files of another width alone, and refuses the last sixteen-digit id at open", async () => {
    const dir = tempDir();
    const strays = [
      "00000000000000001.seg",
      `${"9".repeat(251)}.seg`,
      "123.seg",
      "0000000000000001.seg.bak",
    ];
    for (const name of strays) writeFileSync(join(dir, name), segmentMagic);
    const first = openSpool(dir);
    const written = bodies(3);
    appendAll(first.spool, written);
    await expect(first.spool.persisted()).resolves.toBe(true);
    await first.spool.close();
    expect(segmentFiles(dir).filter((name) => /^\d{16}\.seg$/.test(name))).toEqual([
      "0000000000000001.seg",
    ]);
    for (const name of strays) expect(existsSync(join(dir, name))).toBe(true);
    expect(takeAll(openSpool(dir).spool)).toEqual(written);
    const full = tempDir();
    writeFileSync(join(full, "9999999999999999.seg"), segmentMagic);
    expect(() => openSpool(full)).toThrow(
      /holds 9999999999999999\.seg, the last id a segment name can hold, so no segment can follow it: move that file away/,
    );
  });

  it("deletes an empty segment left by a process that died before its first commit", () => {
    const dir = tempDir();
    closeSync(openSync(join(dir, "0000000000000007.seg"), "w"));
    const { spool } = openSpool(dir);
    expect(spool.stats()).toMatchObject({ events: 0, segments: 0 });
    expect(segmentFiles(dir)).toEqual([]);
  });

  it("drops a batch whose write fails, cuts the segment back, and goes on in a new one", async () => {
    const dir = tempDir();
    const { spool, events } = openSpool(dir);
    appendAll(spool, bodies(2));
    await spool.persisted();
    const full = Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    vi.spyOn(fs, "write").mockImplementationOnce(((...args: unknown[]) => {
      const done = args.at(-1) as (error: Error | null, written: number) => void;
      // Half of the batch reaches the file before the disk fills up.
      writeSync(args[0] as number, Buffer.from("torn"), 0, 4, args[4] as number);
      setImmediate(() => done(full, 0));
    }) as typeof fs.write);
    appendAll(spool, bodies(3, 2));
    await expect(spool.persisted()).resolves.toBe(false);
    expect(events.failed).toEqual([{ bodies: bodies(3, 2), reason: "spool_full", error: full }]);
    appendAll(spool, bodies(1, 5));
    // Conservative until a commit succeeds again: the failed records came after the last durable one.
    await expect(spool.persisted()).resolves.toBe(false);
    appendAll(spool, bodies(1, 6));
    await expect(spool.persisted()).resolves.toBe(true);
    expect(spool.stats().events).toBe(4);
    expect(takeAll(spool)).toEqual([...bodies(2), ...bodies(2, 5)]);
    expect(segmentFiles(dir)).toHaveLength(2);
    expect(readFileSync(join(dir, segmentFiles(dir)[0]!)).includes("torn")).toBe(false);
  });

  it("reads an earlier process's segments back oldest first, whatever the directory's order", async () => {
    const dir = tempDir();
    const first = openSpool(dir, { segmentBytes: 100 });
    for (let round = 0; round < 12; round++) {
      appendAll(first.spool, bodies(3, round * 3));
      await first.spool.persisted();
    }
    await first.spool.close();
    expect(segmentFiles(dir).length).toBeGreaterThan(10);
    // In whatever order the directory lists them (ext4 lists by hash): here, newest first.
    const readdir = fs.readdirSync;
    vi.spyOn(fs, "readdirSync").mockImplementation(((path: string) =>
      (readdir(path) as string[]).sort().reverse()) as typeof fs.readdirSync);
    const reopened = openSpool(dir);
    expect(takeAll(reopened.spool)).toEqual(bodies(36));
    // The magic starts each segment only: no commit wrote it between records.
    expect(reopened.events.skipped).toEqual([]);
  });

  it("fills a segment up to segmentBytes exactly before it starts the next", async () => {
    const { spool } = openSpool(tempDir(), { segmentBytes: segmentMagic.length + 2 * (8 + 16) });
    for (const body of bodies(3)) {
      spool.append(body, 16); // each record is 8 + 16 bytes
      await spool.persisted();
      if (body === bodies(2)[1]) expect(spool.stats().segments).toBe(1);
    }
    expect(spool.stats().segments).toBe(2);
  });

  it("writes no acknowledgement for a segment deleted before the commit", async () => {
    const dir = tempDir();
    // Two records per segment: the first segment holds a.0 and a.1.
    const { spool } = openSpool(dir, { segmentBytes: segmentMagic.length + 2 * (8 + 16) });
    for (let round = 0; round < 3; round++) {
      appendAll(spool, bodies(1, round));
      await spool.persisted();
    }
    const [one, two] = spool.take(2);
    spool.ack(one!); // waits for the next commit
    spool.ack(two!); // the segment is done, and deleted at once
    appendAll(spool, bodies(1, 9));
    await spool.persisted();
    expect(readdirSync(dir).filter((name) => name.endsWith(".ack"))).toEqual([]);
    expect(segmentFiles(dir)).toHaveLength(1);
  });

  it("syncs the directory once per new segment, so that a crash cannot lose a segment's name", async () => {
    const dir = tempDir();
    // Three records per segment, each committed on its own.
    const { spool } = openSpool(dir, { segmentBytes: segmentMagic.length + 3 * (8 + 16) });
    const fsync = vi.spyOn(fs, "fsyncSync");
    for (let round = 0; round < 6; round++) {
      appendAll(spool, bodies(1, round));
      await spool.persisted();
    }
    expect(segmentFiles(dir)).toHaveLength(2);
    expect(fsync).toHaveBeenCalledTimes(2);
  });

  it("drops a batch whose fdatasync fails as spool_failed, and never hands it out", async () => {
    const dir = tempDir();
    const { spool, events } = openSpool(dir);
    appendAll(spool, bodies(1));
    await spool.persisted();
    const failure = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    vi.spyOn(fs, "fdatasync").mockImplementationOnce(((_fd: number, done: (e: Error) => void) => {
      setImmediate(() => done(failure));
    }) as typeof fs.fdatasync);
    appendAll(spool, bodies(2, 1));
    await expect(spool.persisted()).resolves.toBe(false);
    expect(events.failed).toEqual([
      { bodies: bodies(2, 1), reason: "spool_failed", error: failure },
    ]);
    expect(spool.stats()).toMatchObject({ events: 1, bytes: 8 + 16 });
    appendAll(spool, bodies(1, 3));
    await spool.persisted();
    expect(takeAll(spool)).toEqual([...bodies(1), ...bodies(1, 3)]);
    // What a failed fdatasync left is unknown: that segment takes no more records.
    expect(segmentFiles(dir)).toHaveLength(2);
  });

  it("with commitDelayMs, waits that long for more records, then commits them together", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const { spool } = openSpool(tempDir(), { commitDelayMs: 50 });
    const fdatasync = vi.spyOn(fs, "fdatasync");
    appendAll(spool, bodies(1));
    const first = spool.persisted();
    await new Promise((resolve) => setImmediate(resolve));
    vi.advanceTimersByTime(49);
    appendAll(spool, bodies(1, 1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fdatasync).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    vi.useRealTimers();
    await expect(first).resolves.toBe(true);
    await expect(spool.persisted()).resolves.toBe(true);
    expect(fdatasync).toHaveBeenCalledTimes(1);
    expect(takeAll(spool)).toEqual(bodies(2));
  });

  it("counts only acknowledgements of readable records towards deleting a segment", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(2));
    await first.spool.persisted();
    first.spool.ack(first.spool.take(1)[0]!);
    await first.spool.close();
    // A damaged ack file: an offset where no record starts.
    const ackFile = join(dir, segmentFiles(dir)[0]!.replace(".seg", ".ack"));
    const bogus = Buffer.alloc(4);
    bogus.writeUInt32LE(12_345);
    appendFileSync(ackFile, bogus);
    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual(bodies(1, 1));
    expect(segmentFiles(dir)).toHaveLength(1);
  });

  it("deletes at open a segment whose records were all acknowledged before it was sealed", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(2));
    await first.spool.persisted();
    for (const record of first.spool.take(2)) first.spool.ack(record);
    await first.spool.close();
    expect(segmentFiles(dir)).toHaveLength(1); // it was still open
    const second = openSpool(dir);
    expect(second.spool.stats()).toMatchObject({ events: 0, segments: 0 });
    expect(readdirSync(dir).filter((name) => /\.(seg|ack)$/.test(name))).toEqual([]);
  });

  it("reads back a whole record of any size: the format has no size limit to apply", async () => {
    const dir = tempDir();
    const large = JSON.stringify({ action: "a", description: "x".repeat(100_000) });
    const first = openSpool(dir);
    appendAll(first.spool, [large, ...bodies(1)]);
    await first.spool.persisted();
    await first.spool.close();
    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual([large, ...bodies(1)]);
    expect(second.events.skipped).toEqual([]);
  });

  it("at exit, writes a commit whose asynchronous write has not run yet, then what waits", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir);
    appendAll(spool, bodies(2));
    await spool.persisted();
    spool.ack(spool.take(1)[0]!); // so that the open segment is not yet done
    // The next commit's write is held, as the thread pool may hold it when exit() comes.
    let late: (() => void) | undefined;
    const write = fs.write;
    vi.spyOn(fs, "write").mockImplementationOnce(((...args: unknown[]) => {
      late = () => (write as (...a: unknown[]) => void)(...args);
    }) as typeof fs.write);
    appendAll(spool, bodies(50, 2));
    await new Promise((resolve) => setImmediate(resolve)); // the commit has started
    expect(late).toBeDefined();
    appendAll(spool, bodies(50, 52));
    spool.closeSync();
    const afterExit = readdirSync(dir);
    late?.(); // the held write runs after all, into the same file at the same offset
    await new Promise((resolve) => setImmediate(resolve));
    expect(readdirSync(dir)).toEqual(afterExit);
    const second = openSpool(dir);
    expect(takeAll(second.spool)).toEqual([...bodies(1, 1), ...bodies(100, 2)]);
    expect(second.events.skipped).toEqual([]);
  });

  it("at exit, neither seals nor closes the segment a commit is writing, even a new one", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir, { segmentBytes: segmentMagic.length + 8 + 16 });
    appendAll(spool, bodies(1));
    await spool.persisted();
    const close = vi.spyOn(fs, "closeSync");
    let late: (() => void) | undefined;
    const write = fs.write;
    vi.spyOn(fs, "write").mockImplementationOnce(((...args: unknown[]) => {
      late = () => (write as (...a: unknown[]) => void)(...args);
    }) as typeof fs.write);
    appendAll(spool, bodies(1, 1)); // does not fit: a new segment, with nothing yet acknowledged
    await new Promise((resolve) => setImmediate(resolve));
    const writing = (fs.write as unknown as { mock: { calls: unknown[][] } }).mock.calls[0]![0];
    spool.closeSync();
    expect(close.mock.calls.map(([fd]) => fd)).not.toContain(writing);
    late?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(2));
  });

  it("at exit, reports both the commit under way and what waits as failed when the write fails", async () => {
    const dir = tempDir();
    const { spool, events } = openSpool(dir);
    appendAll(spool, bodies(1));
    await spool.persisted();
    vi.spyOn(fs, "write").mockImplementationOnce((() => {}) as unknown as typeof fs.write);
    appendAll(spool, bodies(2, 1));
    await new Promise((resolve) => setImmediate(resolve));
    appendAll(spool, bodies(1, 3));
    const failure = Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
    vi.spyOn(fs, "fdatasyncSync").mockImplementationOnce(() => {
      throw failure;
    });
    spool.closeSync();
    expect(events.failed).toEqual([
      { bodies: bodies(2, 1), reason: "spool_failed", error: failure },
      { bodies: bodies(1, 3), reason: "spool_failed", error: failure },
    ]);
    // Cut back: the records reported as failed do not come back.
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(1));
  });

  it("never reuses a segment id whose .ack outlived its .seg (a crash between the two unlinks)", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(4));
    await first.spool.persisted();
    const taken = first.spool.take(4);
    for (const record of taken.slice(0, 3)) first.spool.ack(record);
    await first.spool.close();
    const [seg] = segmentFiles(dir);
    rmSync(join(dir, seg!)); // the .seg is gone, its .ack is left

    const second = openSpool(dir);
    expect(second.spool.stats()).toMatchObject({ events: 0, segments: 0 });
    expect(readdirSync(dir).filter((name) => name.endsWith(".ack"))).toEqual([]);
    appendAll(second.spool, bodies(4, 10));
    await second.spool.persisted();
    expect(segmentFiles(dir)).toEqual(["0000000000000002.seg"]);
    await second.spool.close();
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(4, 10));
  });

  it("starts new segment ids past an orphaned .ack even when no .seg is left", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "0000000000000009.ack"), Buffer.from([8, 0, 0, 0]));
    const { spool } = openSpool(dir);
    appendAll(spool, bodies(1));
    await spool.persisted();
    expect(segmentFiles(dir)).toEqual(["0000000000000010.seg"]);
  });

  it("skips a segment whose first commit a power loss left as zeros, instead of refusing to start", () => {
    const dir = tempDir();
    const file = join(dir, "0000000000000001.seg");
    writeFileSync(file, Buffer.alloc(40));
    const { spool, events } = openSpool(dir);
    expect(events.skipped).toEqual([{ file, offset: 0, bytes: 40 }]);
    expect(spool.stats()).toMatchObject({ events: 0, segments: 0 });
  });

  it("reports a segment whose first commit was torn inside the magic, then deletes it", () => {
    const dir = tempDir();
    const file = join(dir, "0000000000000001.seg");
    writeFileSync(file, segmentMagic.subarray(0, 5));
    const { spool, events } = openSpool(dir);
    expect(events.skipped).toEqual([{ file, offset: 0, bytes: 5 }]);
    expect(spool.stats()).toMatchObject({ events: 0, segments: 0 });
    expect(segmentFiles(dir)).toEqual([]);
  });

  it("reports a stretch that starts at a delivered record, for the records it hides", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(3));
    await first.spool.persisted();
    first.spool.ack(first.spool.take(1)[0]!);
    await first.spool.close();
    const file = join(dir, segmentFiles(dir)[0]!);
    const data = readFileSync(file);
    // The first record's length and the second's payload are damaged: one stretch over both.
    data[segmentMagic.length]! ^= 0xff;
    data[segmentMagic.length + 24 + 10]! ^= 0xff;
    writeFileSync(file, data);
    const second = openSpool(dir);
    expect(second.events.skipped).toEqual([{ file, offset: segmentMagic.length, bytes: 48 }]);
    expect(takeAll(second.spool)).toEqual([bodies(3)[2]]);
  });

  it("reports each unreadable stretch at one open only", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(3));
    await first.spool.persisted();
    await first.spool.close();
    const file = join(dir, segmentFiles(dir)[0]!);
    const data = readFileSync(file);
    data[segmentMagic.length + 8 + 16 + 10]! ^= 0xff; // the second record
    writeFileSync(file, data);
    const second = openSpool(dir);
    expect(second.events.skipped).toEqual([{ file, offset: segmentMagic.length + 24, bytes: 24 }]);
    await second.spool.close();
    const third = openSpool(dir);
    expect(third.events.skipped).toEqual([]);
    expect(takeAll(third.spool)).toEqual([bodies(3)[0], bodies(3)[2]]);
  });

  it("writes no segment at exit when nothing waits for a commit", () => {
    const dir = tempDir();
    openSpool(dir).spool.closeSync();
    expect(segmentFiles(dir)).toEqual([]);
  });

  it("refuses to open when an ack file cannot be read (here, a directory)", async () => {
    const dir = tempDir();
    const first = openSpool(dir);
    appendAll(first.spool, bodies(1));
    await first.spool.persisted();
    await first.spool.close();
    mkdirSync(join(dir, segmentFiles(dir)[0]!.replace(".seg", ".ack")));
    expect(() => openSpool(dir)).toThrow(/EISDIR/);
  });

  it("keeps acknowledgements in a directory whose name contains .seg", async () => {
    const dir = join(tempDir(), "audit.seg.d");
    const first = openSpool(dir);
    appendAll(first.spool, bodies(2));
    await first.spool.persisted();
    first.spool.ack(first.spool.take(1)[0]!);
    await first.spool.close();
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(1, 1));
  });

  it("writes an acknowledgement made during a commit once that commit is done", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir);
    appendAll(spool, bodies(1));
    await spool.persisted();
    const [record] = spool.take(1);
    appendAll(spool, bodies(1, 1));
    await new Promise((resolve) => setImmediate(resolve)); // that commit is under way
    spool.ack(record!);
    await spool.persisted();
    await new Promise((resolve) => setImmediate(resolve)); // the commit the ack scheduled
    const ackFile = join(dir, segmentFiles(dir)[0]!.replace(".seg", ".ack"));
    expect(readFileSync(ackFile).readUInt32LE(0)).toBe(record!.offset);
  });

  it("refuses appends once closed, by close() or at exit", async () => {
    const closing = openSpool(tempDir());
    await closing.spool.close();
    expect(() => appendAll(closing.spool, bodies(1))).toThrow("The audit spool is closed.");
    const exiting = openSpool(tempDir());
    exiting.spool.closeSync();
    expect(() => appendAll(exiting.spool, bodies(1))).toThrow("The audit spool is closed.");
  });

  it("reports records it could not write at exit as failed", () => {
    const { spool, events } = openSpool(tempDir());
    appendAll(spool, bodies(2));
    const full = Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    vi.spyOn(fs, "writeSync").mockImplementationOnce(() => {
      throw full;
    });
    spool.closeSync();
    expect(events.failed).toEqual([{ bodies: bodies(2), reason: "spool_full", error: full }]);
  });

  it("finishes a write that the file system took only in part", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir);
    const write = fs.write;
    vi.spyOn(fs, "write").mockImplementationOnce(((...args: unknown[]) => {
      const [fd, data, offset, length, position, done] = args as [
        number,
        Uint8Array,
        number,
        number,
        number,
        (error: Error | null, written: number) => void,
      ];
      write(fd, data, offset, Math.floor(length / 2), position, done);
    }) as typeof fs.write);
    appendAll(spool, bodies(10));
    await expect(spool.persisted()).resolves.toBe(true);
    expect(takeAll(spool)).toEqual(bodies(10));
    await spool.close();
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(10));
  });

  it("acknowledges a record in its own segment, whichever segments came before", async () => {
    const dir = tempDir();
    const first = openSpool(dir, { segmentBytes: segmentMagic.length + 8 + 16 });
    for (let round = 0; round < 2; round++) {
      appendAll(first.spool, bodies(1, round));
      await first.spool.persisted();
    }
    const [, second] = first.spool.take(2);
    first.spool.ack(second!); // the only record of the second segment
    await first.spool.close();
    expect(takeAll(openSpool(dir).spool)).toEqual(bodies(1));
  });

  it("deletes a segment at rollover when its records were all acknowledged while it was open", async () => {
    const dir = tempDir();
    const { spool } = openSpool(dir, { segmentBytes: segmentMagic.length + 8 + 16 });
    appendAll(spool, bodies(1));
    await spool.persisted();
    spool.ack(spool.take(1)[0]!);
    expect(segmentFiles(dir)).toHaveLength(1); // still open
    appendAll(spool, bodies(1, 1)); // does not fit: the first segment is sealed
    await spool.persisted();
    expect(segmentFiles(dir)).toHaveLength(1);
    expect(spool.stats().segments).toBe(1);
  });
});
