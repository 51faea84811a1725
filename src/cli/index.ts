#!/usr/bin/env node
import { run } from "./run.ts";

// The first SIGINT or SIGTERM asks the command to stop cleanly (it reports what it did); a
// second one meets Node's default handler and ends the process at once.
const controller = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => controller.abort(new Error(`received ${signal}`)));
}

run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
}).then((status) => {
  process.exitCode = status;
});
