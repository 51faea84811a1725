// Running a test body as on another runtime: Workers (no process), Deno (Deno.env), for the
// readers of the environment.

/** Runs `body` with globalThis.process and globalThis.Deno replaced, as on another runtime. */
export function onRuntime<T>(globals: { process?: unknown; Deno?: unknown }, body: () => T): T {
  const saved = { process: globalThis.process, Deno: (globalThis as { Deno?: unknown }).Deno };
  Object.assign(globalThis, { process: globals.process, Deno: globals.Deno });
  try {
    return body();
  } finally {
    Object.assign(globalThis, saved);
  }
}
