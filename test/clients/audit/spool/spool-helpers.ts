import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { Spool, type SpoolSettings } from "../../../../src/clients/audit/spool/spool.ts";

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
    maxRecordBytes: 16 * 1024,
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

const root = new URL("../../../../", import.meta.url);
const src = new URL("src/", root).href;

/** A Node child process running an ES module, with the SDK's sources at `src`. */
export interface NodeChild {
  pid: number;
  /** Resolves with the first stdout line that satisfies `test`. */
  line(test: (line: string) => boolean): Promise<string>;
  /** Resolves when the process has exited, with its code (null after a signal) and output. */
  exited: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts `code` as an ES module in a new Node process (through bash, so that `ulimit -f` can
 * bound the size of files it writes, in KiB).
 */
export function startNode(code: string, options: { fileSizeKiB?: number } = {}): NodeChild {
  const limit = options.fileSizeKiB === undefined ? "" : `ulimit -f ${options.fileSizeKiB}; `;
  const node = `exec "${process.execPath}" --disable-warning=ExperimentalWarning --input-type=module -`;
  const child = spawn("bash", ["-c", `${limit}${node}`], { cwd: root, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{
    code: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  child.stdin.end(
    `globalThis.__SDK_VERSION__ = "0.0.0-test"; const src = ${JSON.stringify(src)};\n${code}`,
  );
  return {
    pid: child.pid as number,
    line: (test) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.split("\n").find(test);
          if (found !== undefined) {
            listeners.delete(check);
            resolve(found);
          }
        };
        listeners.add(check);
        void exited.then((result) =>
          reject(new Error(`The child exited (${result.code ?? result.signal}): ${result.stderr}`)),
        );
        check();
      }),
    exited,
    kill: (signal) => child.kill(signal),
  };
}
