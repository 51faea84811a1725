// The process that spool.model.test.ts drives: one spooled audit client, told what to do over the
// IPC channel, reporting on stdout (written synchronously, so that a line printed before a SIGKILL
// reaches the test). It can be made to kill itself with SIGKILL right before its Nth file-system
// call that changes the disk, optionally after writing only part of a write: a crash between any
// two syscalls of a commit, an acknowledgement or a segment's deletion, or in the middle of one.
// Run as `node spool-model-child.ts '<options as JSON>'`.
import type { AuditDrop } from "../../../../src/clients/audit/index.ts";

/** Where a process kills itself: before call `countdown` (from 0) of `on`. */
export interface CrashPoint {
  /** Which calls count down: any of those that change the disk, or one kind only. */
  on: "any" | "rmSync" | "fdatasync" | "write";
  countdown: number;
  /** When the call is a write, the part of it written first (0: none). */
  tear: number;
}

/** The options of one process; a restart may change any of them but `dir` and `baseUrl`. */
export interface ChildOptions {
  dir: string;
  baseUrl: string;
  maxEventBytes: number;
  maxQueueBytes: number;
  segmentBytes: number;
  maxEvents: number;
  /** Armed from the start: the process opens the spool, delivers what it holds, and is killed. */
  crash?: CrashPoint | undefined;
}

/** An event range to record: ids `from`..`from + count - 1`, each `bytes` of JSON. */
export interface Recording {
  from: number;
  count: number;
  bytes: number;
}

/** What the test asks. */
export type ChildCommand =
  | { op: "record"; recording: Recording }
  | { op: "persisted" }
  | { op: "flush" }
  | { op: "exit"; kind: "exit" | "throw" | "drain"; recording: Recording; ticks: number }
  | ({ op: "crash"; recording: Recording } & CrashPoint);

/** What the child reports, one JSON object a line. */
export type ChildReport =
  | { ready: true }
  | { recorded: number }
  | { persisted: boolean; upTo: number }
  | { flushed: boolean; spooled: number; queued: number }
  | { drop: string; ids: number[]; count: number }
  | { quiet: true }
  | { crashing: string };

const fs = process.getBuiltinModule("node:fs");
const report = (message: ChildReport) => fs.writeSync(1, `${JSON.stringify(message)}\n`);

// The calls that change the disk, each a point where a crash may come.
const mutating = [
  "openSync",
  "write",
  "writeSync",
  "fdatasync",
  "fdatasyncSync",
  "fsyncSync",
  "ftruncateSync",
  "rmSync",
  "unlinkSync",
  "renameSync",
] as const;
const writeSync = fs.writeSync;
const options = JSON.parse(process.argv[2] ?? "{}") as ChildOptions;
let countdown = options.crash?.countdown ?? -1;
let countedCall = options.crash?.on ?? "any";
let tear = options.crash?.tear ?? 0;
for (const name of mutating) {
  const original = fs[name] as (...args: unknown[]) => unknown;
  (fs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    const counts = countedCall === "any" || countedCall === name;
    if (counts && countdown >= 0 && countdown-- === 0) crash(name, args);
    return original.apply(fs, args);
  };
}

function crash(name: string, args: unknown[]): never {
  const [fd, data, offset, length, position] = args;
  if ((name === "write" || name === "writeSync") && tear > 0 && typeof length === "number") {
    // A torn write: only the first part of it reaches the file.
    const part = Math.max(1, Math.floor(length * tear));
    if (part < length) {
      writeSync(fd as number, data as Uint8Array, offset as number, part, position as number);
    }
  }
  report({ crashing: name });
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable: killed");
}

(globalThis as { __PACKAGE_VERSION__?: string }).__PACKAGE_VERSION__ = "0.0.0-test";
const { createAuditClient } = await import("../../../../src/clients/audit/index.ts");

const idOf = (description: string | undefined) => Number(description?.split(":")[0]);
const audit = createAuditClient({
  baseUrl: options.baseUrl,
  spool: {
    dir: options.dir,
    segmentBytes: options.segmentBytes,
    maxEvents: options.maxEvents,
  },
  maxEventBytes: options.maxEventBytes,
  maxQueueBytes: options.maxQueueBytes,
  concurrency: 2,
  retry: { baseDelayMs: 1, maxDelayMs: 4 },
  flushOnExit: true,
  flushTimeoutMs: 200,
  onError() {},
  onDrop: (drop: AuditDrop) =>
    report({
      drop: drop.reason,
      ids: drop.events.map((event) => idOf(event.description)),
      count: drop.count,
    }),
});

let lastRecorded = -1;
/** Records the events of `recording`, each padded to its size in bytes of JSON. */
function record({ from, count, bytes }: Recording): void {
  for (let id = from; id < from + count; id++) {
    const head = `${id}:`;
    // {"action":"m","description":"…"} is 31 bytes around the description.
    const description = head + "x".repeat(Math.max(0, bytes - 31 - head.length));
    audit.record({ action: "m", description });
    lastRecorded = id;
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

process.on("message", async (command: ChildCommand) => {
  switch (command.op) {
    case "record":
      record(command.recording);
      return report({ recorded: lastRecorded });
    case "persisted": {
      const upTo = lastRecorded;
      return report({ persisted: await audit.persisted(), upTo });
    }
    case "flush": {
      const flushed = await audit.flush({ timeoutMs: 60_000 });
      const { spooled = 0, queued } = audit.stats();
      return report({ flushed, spooled, queued });
    }
    case "exit":
      record(command.recording);
      for (let count = 0; count < command.ticks; count++) await tick();
      if (command.kind === "exit") process.exit(0);
      if (command.kind === "throw") {
        setImmediate(() => {
          throw new Error("model: an uncaught exception");
        });
      }
      // Let the event loop empty: beforeExit (flushOnExit), then exit.
      else process.disconnect();
      return;
    case "crash": {
      tear = command.tear;
      countedCall = command.on;
      countdown = command.countdown;
      record(command.recording);
      const upTo = lastRecorded;
      report({ persisted: await audit.persisted(), upTo });
      // Delivery, acknowledgements and deletions give the countdown more calls to stop at.
      await audit.flush({ timeoutMs: 60_000 });
      return report({ quiet: true });
    }
  }
});

await tick(); // drops found at open are reported first
report({ ready: true });
if (options.crash !== undefined) {
  await audit.flush({ timeoutMs: 60_000 });
  report({ quiet: true });
}
