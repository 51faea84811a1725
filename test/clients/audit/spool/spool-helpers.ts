import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { Spool, type SpoolSettings } from "../../../../src/clients/audit/spool/spool.ts";

/**
 * The node:fs the spool uses (it reaches it through process.getBuiltinModule, which returns the
 * object require() does), for spying on.
 */
export const spoolFs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");

const dirs: string[] = [];
const spools: Spool[] = [];

afterEach(() => {
  for (const spool of spools.splice(0)) spool.closeSync();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-spool-"));
  dirs.push(dir);
  return dir;
}

/** What a spool reported through its hooks. */
export interface SpoolEvents {
  durable: number;
  failed: { bodies: string[]; reason: string; error: unknown }[];
  skipped: { file: string; offset: number; bytes: number }[];
}

/** Opens a spool on `dir` with small defaults and recording hooks; closed after the test. */
export function openSpool(
  dir: string,
  settings: Partial<SpoolSettings> = {},
): { spool: Spool; events: SpoolEvents } {
  const events: SpoolEvents = { durable: 0, failed: [], skipped: [] };
  const spool = Spool.open({
    dir,
    maxEvents: 100_000,
    maxBytes: 64 * 1024 * 1024,
    segmentBytes: 1024 * 1024,
    commitDelayMs: 0,
    onDurable: () => events.durable++,
    onFailed: (bodies, reason, error) => events.failed.push({ bodies, reason, error }),
    onSkipped: (skip) => events.skipped.push(skip),
    ...settings,
  });
  spools.push(spool);
  return { spool, events };
}

/** Takes every durable record's body, acknowledging none. */
export function takeAll(spool: Spool): string[] {
  return spool.take(Number.MAX_SAFE_INTEGER).map((record) => record.body);
}

/** `count` distinct JSON bodies. */
export function bodies(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({ action: `a.${from + index}` }),
  );
}

/** Appends each body with its byte length. */
export function appendAll(spool: Spool, list: string[]): boolean[] {
  return list.map((body) => spool.append(body, Buffer.byteLength(body)));
}
