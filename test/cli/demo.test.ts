import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import { createFakeIo } from "../support/fake-io.ts";

/** The whole number after `label` in the output, thousands separators allowed. */
function figure(out: string, pattern: RegExp): number[] {
  const match = pattern.exec(out);
  if (!match) throw new Error(`No match for ${pattern} in:\n${out}`);
  return match.slice(1).map((text) => Number(text.replaceAll(",", "")));
}

function databaseOf(out: string): string {
  const path = /^ {2}database +(\S+)$/m.exec(out)?.[1];
  if (path === undefined) throw new Error(`No database path in:\n${out}`);
  return path;
}

describe("platform-integration demo", () => {
  it("syncs, changes, redelivers, survives a store failure, and sums it up", async () => {
    const io = createFakeIo();
    expect(await run(["demo", "--users", "50"], io)).toBe(0);
    const { out } = io;

    expect(out).toContain("initial sync: 100%  50/50\n");
    expect(out).toMatch(/\n {3}50 users created in \d+\.\d\d s/);
    const [modified, deleted, added] = figure(
      out,
      /\n2\. Directory changes: (\d+) modified, (\d+) deleted, (\d+) added\n/,
    ) as [number, number, number];
    expect(out).toMatch(
      /Next cycle: the same (create|modify|delete) again \(attempt 2\), answered/,
    );
    const [joined] = figure(out, /\n3\. Store failure: (\d+) new users join/) as [number];
    expect(out).toMatch(/\n {3}app: create \S+ answered 503: disk I\/O error \(injected/);
    expect(out).toMatch(/The platform gets 503 store_unavailable for create /);
    expect(out).toContain("Next cycle: the same create again (attempt 2), answered 201");

    const [users, ...equation] = figure(
      out,
      /\n {2}users in the database +([\d,]+) +([\d,]+) created - (\d+) deleted \+ (\d+) added \+ (\d+) joined\n/,
    );
    expect(equation).toEqual([50, deleted, added, joined]);
    expect(users).toBe(50 - deleted + added + joined);
    // One event per change stored (every create, modify and delete acknowledged, nothing for
    // the failed write), and one more for the message whose answer was lost: the handler runs
    // onChange at least once per change, so its redelivery is audited again, and the summary
    // says so. Catches a sum that leaves the redelivery out, and a handler or demo whose count
    // differs from the story it prints.
    expect(out).toContain("Its onChange hook runs again (at least once per change)");
    const [received, ...story] = figure(
      out,
      /\n {2}audit events recorded +([\d,]+) +([\d,]+) created \+ (\d+) changed \+ (\d+) joined \+ (\d+) redelivered\n/,
    );
    expect(story).toEqual([50, modified + deleted + added, joined, 1]);
    expect(received).toBe(50 + modified + deleted + added + joined + 1);
    expect(out).toMatch(/\n {2}running version +1\.4\.0 +release 40, installed \d{4}-\d\d-\d\d\n/);
    expect(out).toMatch(/\n {2}pending updates +1 +1\.5\.0 \(release 41\): /);
    expect(existsSync(dirname(databaseOf(out)))).toBe(false);
  });

  it("keeps the database with --keep", async () => {
    const io = createFakeIo();
    expect(await run(["demo", "--users", "5", "--keep"], io)).toBe(0);
    const database = databaseOf(io.out);
    expect(io.out).toContain(`\nKept the database: ${database}\n`);
    expect(existsSync(database)).toBe(true);
    await rm(dirname(database), { recursive: true });
  });

  it("stops at once, exits 1 and cleans up when interrupted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("received SIGINT"));
    const io = createFakeIo({ signal: controller.signal });
    expect(await run(["demo", "--users", "5"], io)).toBe(1);
    expect(io.out).toMatch(/\nInterrupted\.\n$/);
    expect(existsSync(dirname(databaseOf(io.out)))).toBe(false);
  });

  it("refuses a wrong command line with exit 2", async () => {
    for (const args of [["--users", "0"], ["--users", "many"], ["extra"], ["--seed", "2"]]) {
      const io = createFakeIo();
      expect(await run(["demo", ...args], io)).toBe(2);
      expect(io.err).toContain('Run "platform-integration demo --help" for its options.');
    }
  });

  it("explains itself with --help", async () => {
    const io = createFakeIo();
    expect(await run(["demo", "--help"], io)).toBe(0);
    expect(io.out).toMatch(/^Usage: platform-integration demo \[options\]\n/);
    expect(io.out).toContain("--users <n>");
    expect(io.out).toContain("--keep");
  });
});
