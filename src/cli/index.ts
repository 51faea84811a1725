#!/usr/bin/env node
// The bin: the process's signals and stdout around run(). A command that runs long and allocates
// much (the directory sync) wants V8's heap kept small and its young generation collected by one
// thread, which only Node's command line can set: V8 sizes its heap when the process starts. So
// on Node the bin starts itself again with those flags, in the same process (process.execve, Node
// 22.15 and later, not on Windows): the command then runs on the main thread, under the same pid,
// with the same stdio and signals. run.ts is imported only once it is known that no restart
// follows.
import { dropSqliteWarning } from "../internal/sqlite-warning.ts";
import type { CommandIo } from "./command.ts";

/**
 * The commands that run long and allocate much, with the size of V8's semi-spaces for them (the
 * young generation is three times as large: two semi-spaces and as much for large objects). V8
 * sizes them by the machine's memory: on a 24 GiB machine a 100,000-user sync peaked at 222 MiB
 * RSS with 16 MiB of live heap. The sync reads the directory in a thread of its own
 * (readInWorker), so this thread only delivers: at 30,000 users, 8 MiB semi-spaces peaked at
 * 164-173 MiB and 16 MiB at 170-187 MiB, at the same speed (bench/README.md).
 */
const semiSpaceCapsMb: ReadonlyMap<string, number> = new Map([["sync", 8]]);

silenceSqliteWarning();
const argv = process.argv.slice(2);
const semiSpaceMb = semiSpaceCapsMb.get(argv[0] ?? "");
if (semiSpaceMb !== undefined && heapIsOurs()) restartWithHeapFlags(semiSpaceMb);
void main(argv);

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
  const io: CommandIo = {
    stdout: {
      write: (text: string) => outputClosed.signal.aborted || process.stdout.write(text),
      get isTTY() {
        return process.stdout.isTTY;
      },
      get columns() {
        return process.stdout.columns;
      },
    },
    stderr: process.stderr,
    env: process.env,
    signal: interrupted.signal,
    outputClosed: outputClosed.signal,
  };
  const { run } = await import("./run.ts");
  const status = await run(argv, io);
  process.exitCode = outputClosed.signal.aborted ? 0 : status;
  // The report is written: the process ends now, not when the application lets go of a socket
  // (a keep-alive connection, a request it never answered) or a timer runs out. Once both
  // streams have taken what was written, so that a pipe loses nothing.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit();
}

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write("", () => resolve()));
}

/**
 * The commands that keep state (sync, demo) use node:sqlite, which Node 22 and 24 flag as
 * experimental with a warning on first load, also in the sync's worker threads. It tells the user
 * of a command nothing they can act on, so the bin drops that one warning for its whole process;
 * every other warning is printed as before.
 */
function silenceSqliteWarning(): void {
  const emitWarning = process.emitWarning as (warning: unknown, ...rest: unknown[]) => void;
  process.emitWarning = dropSqliteWarning(emitWarning) as typeof process.emitWarning;
}

/**
 * Replaces the process with Node running this bin again, its semi-spaces capped, its old
 * generation collected sooner, and one thread scavenging: V8's parallel scavenging wakes helper
 * threads at each collection, which on a machine of few cores compete with the sync's
 * one-message-at-a-time exchange with the application. Where Node cannot (Windows, Node before
 * 22.15) the command runs under V8's defaults.
 */
function restartWithHeapFlags(semiSpaceMb: number): void {
  const { execve } = process as {
    execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
  };
  if (typeof execve !== "function" || process.platform === "win32") return;
  const script = process.argv[1] as string;
  const args = [
    `--max-semi-space-size=${semiSpaceMb}`,
    // V8 lets the old generation grow to up to four times its live size before collecting it;
    // twice is enough here: a 100,000-user sync peaked at 157-160 MiB against 186-188 MiB, at
    // the same speed (4 rounds each, bench/README.md).
    "--heap-growing-percent=100",
    "--no-parallel-scavenge",
    script,
  ];
  // The environment explicitly: without it Node 24.9 starts the new image with none at all (the
  // bind password in LDAP_BIND_PASSWORD would be lost), though its documentation says otherwise.
  execve.call(
    process,
    process.execPath,
    [process.execPath, ...process.execArgv, ...args, ...process.argv.slice(2)],
    process.env,
  );
}

/**
 * Whether the bin may size V8's heap and choose how it is collected: on Node only (Bun's
 * JavaScriptCore has no young generation to size), and not when Node's command line or
 * NODE_OPTIONS sets any of the flags the restart would (as the restarted bin's does): the user
 * who tunes one takes over all of them.
 */
function heapIsOurs(): boolean {
  if (process.versions.bun !== undefined || process.versions.deno !== undefined) return false;
  const nodeFlags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  return !/--(?:max|min)-semi-space-size|heap-growing-percent|parallel-scavenge|--single-threaded-gc/.test(
    nodeFlags,
  );
}
