#!/usr/bin/env node
import { run } from "./run.ts";

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

run(process.argv.slice(2), {
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
}).then((status) => {
  process.exitCode = outputClosed.signal.aborted ? 0 : status;
});
