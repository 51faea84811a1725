// The audit spool, explored: random sequences of record, persisted(), flush, normal exits
// (process.exit(), an uncaught exception, the event loop emptying), crashes (SIGKILL right before
// a random file-system call, some in the middle of a write), restarts with changed options and an
// API that fails for a while, driven in a real child process (spool-model-child.ts) beside a
// model of what it was told. The invariant: every event whose persisted() resolved true, and
// every event recorded before a normal exit, is delivered or reported dropped with a reason; bytes
// are reported as damage only after a crash, once; and after a flush nothing stays behind.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exploration } from "../../../support/exploration.ts";
import { type LocalServer, startServer } from "../../integration-api/local-server.ts";
import type {
  ChildCommand,
  ChildOptions,
  ChildReport,
  CrashPoint,
  Recording,
} from "./spool-model-child.ts";

const explore = exploration("audit spool", { numRuns: 4, maxCommands: 50 });
const childFile = new URL("spool-model-child.ts", import.meta.url).pathname;
const compileCache = join(tmpdir(), "platform-integration-node-cache");

/** The Audit API: records the ids it answered 201 for; fails the next `failing` requests. */
let api: LocalServer;
const server = { delivered: new Set<number>(), failing: 0 };
beforeAll(async () => {
  api = await startServer((_request, response, body) => {
    if (server.failing > 0) {
      server.failing--;
      return response.writeHead(503).end();
    }
    server.delivered.add(Number(JSON.parse(body).description.split(":")[0]));
    response.writeHead(201).end();
  });
});
afterAll(() => api.close());

type Settings = Omit<ChildOptions, "dir" | "baseUrl">;

/** One child process, its reports read line by line. */
class Child {
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  readonly #process;
  readonly #reports: ChildReport[] = [];
  readonly #waiting = new Set<() => void>();
  #stderr = "";

  constructor(options: ChildOptions, onReport: (report: ChildReport) => void) {
    this.#process = spawn(
      process.execPath,
      ["--disable-warning=ExperimentalWarning", childFile, JSON.stringify(options)],
      {
        stdio: ["ignore", "pipe", "pipe", "ipc"],
        env: { ...process.env, NODE_COMPILE_CACHE: compileCache },
      },
    );
    let partial = "";
    this.#process.stdout?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const report = JSON.parse(line) as ChildReport;
        onReport(report);
        this.#reports.push(report);
      }
      for (const wake of this.#waiting) wake();
    });
    this.#process.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) =>
      this.#process.on("exit", (code, signal) => {
        resolve({ code, signal });
        for (const wake of this.#waiting) wake();
      }),
    );
  }

  get stderr(): string {
    return this.#stderr;
  }

  send(command: ChildCommand): void {
    this.#process.send(command);
  }

  /** The first report not yet taken that `test` accepts; undefined once the child exited. */
  async next<T extends ChildReport>(
    test: (report: ChildReport) => boolean,
  ): Promise<T | undefined> {
    for (;;) {
      const index = this.#reports.findIndex(test);
      if (index >= 0) return this.#reports.splice(index, 1)[0] as T;
      if (this.#process.exitCode !== null || this.#process.signalCode !== null) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiting.delete(wake);
          resolve();
        };
        this.#waiting.add(wake);
      });
    }
  }

  kill(): void {
    this.#process.kill("SIGKILL");
  }
}

/** What the test knows: what was recorded, confirmed, dropped, and which processes crashed. */
class Model {
  nextId = 0;
  /** Ids recorded by the current process. */
  recordedNow: number[] = [];
  readonly recorded = new Set<number>();
  /** Events that must never be lost: persisted() said so, or a normal exit followed. */
  readonly confirmed = new Set<number>();
  readonly dropped = new Map<number, string>();
  /** Damage reports the current process may still make: one if the one before it crashed. */
  damageAllowed = 0;
  unexpected: string[] = [];
  settings: Settings;
  readonly stats = { exits: 0, crashes: 0, crashesAtSyscall: 0, damage: 0 };

  constructor(settings: Settings) {
    this.settings = settings;
  }

  recording(count: number, bytes: number): Recording {
    const from = this.nextId;
    this.nextId += count;
    // The smallest event of this shape is 34 bytes; none may pass this process's maxEventBytes.
    const size = Math.max(
      34 + String(from + count).length,
      Math.min(bytes, this.settings.maxEventBytes),
    );
    for (let id = from; id < from + count; id++) {
      this.recorded.add(id);
      this.recordedNow.push(id);
    }
    return { from, count, bytes: size };
  }

  confirm(upTo: number): void {
    for (const id of this.recordedNow) if (id <= upTo) this.confirmed.add(id);
  }

  /** Every confirmed event delivered or dropped with a reason, and nothing unexpected seen. */
  check(): void {
    const lost = [...this.confirmed].filter(
      (id) => !server.delivered.has(id) && !this.dropped.has(id),
    );
    expect({ lost, unexpected: this.unexpected }).toEqual({ lost: [], unexpected: [] });
  }
}

/** What all runs did, printed at the end. */
class Totals {
  steps = 0;
  runs = 0;
  recorded = 0;
  confirmed = 0;
  delivered = 0;
  dropped = 0;
  readonly stats = { exits: 0, crashes: 0, crashesAtSyscall: 0, damage: 0 };

  add(model: Model): void {
    this.runs++;
    this.recorded += model.recorded.size;
    this.confirmed += model.confirmed.size;
    this.delivered += server.delivered.size;
    this.dropped += model.dropped.size;
    for (const key of Object.keys(this.stats) as (keyof Totals["stats"])[]) {
      this.stats[key] += model.stats[key];
    }
  }

  toString(): string {
    const { exits, crashes, crashesAtSyscall, damage } = this.stats;
    return `${this.runs} runs, ${this.steps} commands; ${this.recorded} events recorded, ${this.confirmed} confirmed, ${this.delivered} delivered, ${this.dropped} dropped; ${exits} normal exits, ${crashes} SIGKILLs (${crashesAtSyscall} at a chosen syscall), ${damage} damaged stretches reported`;
  }
}

interface Real {
  dir: string;
  child: Child;
}

/** Starts a process; with `allowDeath`, one armed to crash may die before it is ready. */
function start(
  model: Model,
  dir: string,
  settings: Settings & Pick<ChildOptions, "crash">,
  { allowDeath = false } = {},
): Promise<Child> {
  const { crash: _, ...kept } = settings;
  model.settings = kept;
  model.recordedNow = [];
  const child = new Child({ dir, baseUrl: api.url, ...settings }, (report) => {
    if (!("drop" in report)) return;
    if (report.drop === "spool_damaged") {
      model.stats.damage++;
      if (model.damageAllowed-- <= 0) model.unexpected.push("damage reported without a crash");
    } else if (report.drop !== "spool_full") {
      model.unexpected.push(`dropped as ${report.drop}`);
    }
    for (const id of report.ids) model.dropped.set(id, report.drop);
  });
  return child
    .next((report) => "ready" in report)
    .then((ready) => {
      if (ready === undefined && !allowDeath) {
        throw new Error(`The child did not start: ${child.stderr}`);
      }
      return child;
    });
}

/** Waits for the child's end, then starts the next with `settings`. */
async function restart(model: Model, real: Real, settings: Settings, crashed: boolean) {
  await real.child.exited;
  model.damageAllowed = crashed ? 1 : 0;
  real.child = await start(model, real.dir, settings);
}

const settingsArbitrary: fc.Arbitrary<Settings> = fc.record({
  maxEventBytes: fc.constantFrom(200, 2000),
  maxQueueBytes: fc.constantFrom(150, 1000, 100_000),
  // Mostly small: every commit then starts a segment, and every delivery ends one.
  segmentBytes: fc.constantFrom(100, 100, 600, 4096),
  maxEvents: fc.constantFrom(25, 100_000),
});
const initialSettings: Settings = {
  maxEventBytes: 2000,
  maxQueueBytes: 100_000,
  segmentBytes: 100,
  maxEvents: 100_000,
};
const sizes = fc.integer({ min: 34, max: 1900 });

type Command = fc.AsyncCommand<Model, Real>;

function command(label: string, run: (model: Model, real: Real) => Promise<void>): Command {
  return { check: () => true, run, toString: () => label };
}

const record = (count: number, bytes: number) =>
  command(`record(${count} × ${bytes} B)`, async (model, real) => {
    real.child.send({ op: "record", recording: model.recording(count, bytes) });
    await real.child.next((report) => "recorded" in report);
  });

const persisted = () =>
  command("persisted()", async (model, real) => {
    real.child.send({ op: "persisted" });
    const answer = await real.child.next<{ persisted: boolean; upTo: number }>(
      (report) => "persisted" in report,
    );
    if (answer?.persisted === true) model.confirm(answer.upTo);
  });

const failApi = (requests: number) =>
  command(`the API fails ${requests} requests`, async () => {
    server.failing = requests;
  });

const flush = () =>
  command("flush()", async (model, real) => {
    real.child.send({ op: "flush" });
    const answer = await real.child.next<{ flushed: boolean; spooled: number; queued: number }>(
      (report) => "flushed" in report,
    );
    // A flush waits until every event is delivered or dropped: none may be left behind.
    expect(answer).toEqual({ flushed: true, spooled: 0, queued: 0 });
    model.check();
  });

const exit = (
  kind: "exit" | "throw" | "drain",
  count: number,
  bytes: number,
  ticks: number,
  next: Settings,
) =>
  command(
    `${kind} after recording ${count} × ${bytes} B and ${ticks} ticks, then ${JSON.stringify(next)}`,
    async (model, real) => {
      real.child.send({ op: "exit", kind, recording: model.recording(count, bytes), ticks });
      const { code, signal } = await real.child.exited;
      expect({ code, signal }).toEqual({ code: kind === "throw" ? 1 : 0, signal: null });
      if (kind !== "throw") expect(real.child.stderr).toBe("");
      // A normal exit loses nothing: every event recorded is on disk.
      model.confirm(Number.POSITIVE_INFINITY);
      model.stats.exits++;
      await restart(model, real, next, false);
    },
  );

const crash = (
  on: CrashPoint["on"],
  countdown: number,
  tear: number,
  count: number,
  bytes: number,
  next: Settings,
) =>
  command(
    `SIGKILL before call ${countdown} of ${on === "any" ? "those changing the disk" : on} (a write torn at ${tear}) after recording ${count} × ${bytes} B, then ${JSON.stringify(next)}`,
    async (model, real) => {
      const recording = model.recording(count, bytes);
      real.child.send({ op: "crash", on, countdown, tear, recording });
      const answer = await real.child.next<{ persisted: boolean; upTo: number }>(
        (report) => "persisted" in report,
      );
      if (answer?.persisted === true) model.confirm(answer.upTo);
      // Not killed by its countdown before it was quiet: killed now, wherever delivery is.
      if ((await real.child.next((report) => "quiet" in report)) === undefined) {
        model.stats.crashesAtSyscall++;
      } else real.child.kill();
      expect((await real.child.exited).signal).toBe("SIGKILL");
      model.stats.crashes++;
      await restart(model, real, next, true);
    },
  );

const recordCommand = fc
  .tuple(fc.integer({ min: 1, max: 30 }), sizes)
  .map(([n, b]) => record(n, b));
const persistedCommand = fc.constant(null).map(persisted);
// fc.commands draws each kind alike: the kinds that start no process are listed more than once,
// so that a run of a few hundred commands costs a few dozen processes.
const crashAtStart = (point: CrashPoint, next: Settings) =>
  command(
    `process.exit(), then a process killed before call ${point.countdown} of ${point.on === "any" ? "those changing the disk" : point.on} from its start (a write torn at ${point.tear}), then ${JSON.stringify(next)}`,
    async (model, real) => {
      real.child.send({ op: "exit", kind: "exit", recording: model.recording(0, 34), ticks: 0 });
      await real.child.exited;
      model.confirm(Number.POSITIVE_INFINITY);
      model.stats.exits++;
      const armed = { ...model.settings, crash: point };
      real.child = await start(model, real.dir, armed, { allowDeath: true });
      if ((await real.child.next((report) => "quiet" in report)) === undefined) {
        model.stats.crashesAtSyscall++;
      } else real.child.kill();
      expect((await real.child.exited).signal).toBe("SIGKILL");
      model.stats.crashes++;
      await restart(model, real, next, true);
    },
  );

// Anywhere, or between the unlinks of a segment's deletion, or around a commit's syscalls.
const crashPoint: fc.Arbitrary<CrashPoint> = fc
  .constantFrom<CrashPoint["on"]>("any", "any", "rmSync", "fdatasync", "write")
  .chain((on) =>
    fc.record({
      on: fc.constant(on),
      countdown: fc.integer({ min: 0, max: on === "any" ? 12 : 3 }),
      tear: fc.constantFrom(0, 0.3, 0.7),
    }),
  );

const commands = [
  recordCommand,
  recordCommand,
  recordCommand,
  persistedCommand,
  persistedCommand,
  fc.integer({ min: 1, max: 6 }).map(failApi),
  fc.constant(null).map(flush),
  fc
    .tuple(
      fc.constantFrom("exit" as const, "throw" as const, "drain" as const),
      fc.integer({ min: 0, max: 30 }),
      sizes,
      fc.integer({ min: 0, max: 4 }),
      settingsArbitrary,
    )
    .map((args) => exit(...args)),
  fc
    .tuple(crashPoint, fc.integer({ min: 0, max: 30 }), sizes, settingsArbitrary)
    .map(([{ on, countdown, tear }, n, b, next]) => crash(on, countdown, tear, n, b, next)),
  fc.tuple(crashPoint, settingsArbitrary).map((args) => crashAtStart(...args)),
];

describe("the audit spool, explored", () => {
  it(
    "loses no event that persisted() confirmed or that a normal exit followed, whatever the crashes and option changes",
    async () => {
      const totals = new Totals();
      await fc.assert(
        fc.asyncProperty(
          fc.commands(commands, { maxCommands: explore.maxCommands, size: "max" }),
          async (sequence) => {
            const dir = mkdtempSync(join(tmpdir(), "pi-spool-model-"));
            server.delivered.clear();
            server.failing = 0;
            const model = new Model(initialSettings);
            const real: Real = { dir, child: await start(model, dir, initialSettings) };
            try {
              await fc.asyncModelRun(() => ({ model, real }), sequence);
              totals.steps += [...sequence].length;
              // The API comes back, and a last process sends what is left.
              server.failing = 0;
              await exit("exit", 0, 34, 0, initialSettings).run(model, real);
              await flush().run(model, real);
              totals.add(model);
            } finally {
              real.child.kill();
              await real.child.exited;
              rmSync(dir, { recursive: true, force: true });
            }
          },
        ),
        // In npm test, a failure ends the run at once (its seed and commands printed); shrinking
        // it, which restarts processes by the hundred, is for npm run explore.
        { ...explore.parameters, endOnFailure: !explore.exploring },
      );
      console.log(`audit spool model: ${totals}`);
    },
    explore.timeoutMs,
  );
});
