#!/usr/bin/env node
// The bin: the process's signals and stdout around run(). A command that caps V8's young
// generation (the directory sync) runs in a worker thread with that cap, since V8 sizes its heap
// only when an isolate starts; the main thread then only relays signals, output and the status,
// and never loads the commands (run.ts is imported where a command runs).
import { setFlagsFromString } from "node:v8";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { CommandIo } from "./command.ts";
import { youngGenerationCapsMb } from "./young-generation.ts";

/** What the main thread tells a command's worker: its arguments and what stdout is. */
interface WorkerStart {
  argv: string[];
  isTTY: boolean | undefined;
  columns: number | undefined;
}

/** Main thread to worker: a signal arrived, or stdout's reader went away. */
type WorkerNotice = { stop: string } | { outputClosed: true };

// No top-level await: the CommonJS build of the bin could not have it.
void (isMainThread ? main(process.argv.slice(2)) : inWorker(workerData as WorkerStart));

async function main(argv: string[]): Promise<void> {
  // The first SIGINT or SIGTERM asks the command to stop cleanly (it reports what it did); a
  // second one meets Node's default handler and ends the process at once.
  const interrupted = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => interrupted.abort(new Error(`received ${signal}`)));
  }
  // A reader that went away (`... | head -1`) is no error: further output is dropped, and run()
  // stops the command (a server keeps serving) and ends with status 0, without a stack trace.
  const outputClosed = new AbortController();
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    outputClosed.abort(error);
    process.exitCode = 0;
  });

  const maxYoungGenerationSizeMb = youngGenerationCapsMb.get(argv[0] ?? "");
  if (maxYoungGenerationSizeMb === undefined || !youngGenerationIsOurs()) {
    const { run } = await import("./run.ts");
    const status = await run(argv, processIo(interrupted.signal, outputClosed.signal));
    process.exitCode = outputClosed.signal.aborted ? 0 : status;
    return;
  }
  const start: WorkerStart = {
    argv,
    isTTY: process.stdout.isTTY,
    columns: process.stdout.columns,
  };
  // One thread collects the young generation: V8's parallel scavenging wakes helper threads at each
  // collection, which on a machine of few cores compete with the sync's one-message-at-a-time
  // exchange with the application (a 30,000-user sync on 2 cores, medians of 8 rounds: 3.36 s and
  // 2.83 CPU-s without them, 3.45 s and 2.92 CPU-s with; bench/README.md). V8 reads the flag at
  // each collection, so setting it here reaches the worker.
  setFlagsFromString("--no-parallel-scavenge");
  // The worker's stdout and stderr are piped into the process's own.
  const worker = new Worker(new URL(import.meta.url), {
    workerData: start,
    resourceLimits: { maxYoungGenerationSizeMb },
  });
  const notify = (notice: WorkerNotice) => worker.postMessage(notice);
  interrupted.signal.addEventListener("abort", () => {
    notify({ stop: (interrupted.signal.reason as Error).message });
  });
  outputClosed.signal.addEventListener("abort", () => notify({ outputClosed: true }));
  worker.on("error", (error) => {
    process.stderr.write(`platform-integration: ${error.stack ?? String(error)}\n`);
  });
  worker.on("exit", (status) => {
    process.exitCode = outputClosed.signal.aborted ? 0 : status;
  });
}

async function inWorker(start: WorkerStart): Promise<void> {
  const interrupted = new AbortController();
  const outputClosed = new AbortController();
  parentPort?.on("message", (notice: WorkerNotice) => {
    if ("stop" in notice) interrupted.abort(new Error(notice.stop));
    else outputClosed.abort(new Error("stdout was closed"));
  });
  // The port must not keep the worker alive once the command is done.
  parentPort?.unref();
  const io = processIo(interrupted.signal, outputClosed.signal, start);
  const { run } = await import("./run.ts");
  process.exitCode = await run(start.argv, io);
}

function processIo(
  signal: AbortSignal,
  outputClosed: AbortSignal,
  stdout: Pick<WorkerStart, "isTTY" | "columns"> = process.stdout,
): CommandIo {
  return {
    stdout: {
      write: (text: string) => outputClosed.aborted || process.stdout.write(text),
      get isTTY() {
        return stdout.isTTY;
      },
      get columns() {
        return stdout.columns;
      },
    },
    stderr: process.stderr,
    env: process.env,
    signal,
    outputClosed,
  };
}

/**
 * Whether the bin may size the young generation and choose how it is collected: on Node only
 * (Bun's JavaScriptCore has no young generation to size), and not when Node's command line or
 * NODE_OPTIONS already sizes it or sets how it is collected.
 */
function youngGenerationIsOurs(): boolean {
  if (process.versions.bun !== undefined || process.versions.deno !== undefined) return false;
  const nodeFlags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  return !/--(?:max|min)-semi-space-size|--max-young-generation-size|parallel-scavenge|--single-threaded-gc/.test(
    nodeFlags,
  );
}
