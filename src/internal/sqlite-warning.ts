// node:sqlite's ExperimentalWarning, which Node 22 and 24 print once when the module first loads.
// It tells an application nothing it can act on (the store works the same), so the SQLite store
// drops it while it loads node:sqlite, and the bin for its whole process; every other warning,
// experimental or not, is printed as before.

/** Whether a `process.emitWarning(warning, ...rest)` call is node:sqlite's experimental warning. */
export function isSqliteExperimentalWarning(warning: unknown, rest: readonly unknown[]): boolean {
  const options = rest[0];
  const type =
    typeof options === "string" ? options : (options as { type?: unknown } | undefined)?.type;
  const name = warning instanceof Error ? warning.name : type;
  const text = warning instanceof Error ? warning.message : String(warning);
  return name === "ExperimentalWarning" && /\bSQLite\b/i.test(text);
}

type EmitWarning = (warning: unknown, ...rest: unknown[]) => void;

/**
 * Runs `body` with node:sqlite's experimental warning dropped, and only that one; with
 * `whileRunning: false`, drops it for the rest of the process (the bin).
 */
export function withoutSqliteWarning<T>(body: () => T, { whileRunning = true } = {}): T {
  const runtime = globalThis.process;
  const emitWarning = runtime?.emitWarning as EmitWarning | undefined;
  if (runtime === undefined || typeof emitWarning !== "function") return body();
  const filtered: EmitWarning = function (this: unknown, warning, ...rest) {
    if (isSqliteExperimentalWarning(warning, rest)) return;
    return emitWarning.call(runtime, warning, ...rest);
  };
  runtime.emitWarning = filtered as typeof runtime.emitWarning;
  if (!whileRunning) return body();
  try {
    return body();
  } finally {
    // Put back only our own filter: something installed meanwhile stays.
    if (runtime.emitWarning === (filtered as unknown)) {
      runtime.emitWarning = emitWarning as typeof runtime.emitWarning;
    }
  }
}
