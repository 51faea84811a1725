// node:sqlite's ExperimentalWarning, which Node 22 and 24 print once when the module first loads.
// It tells an application nothing it can act on (the store works the same), so the SQLite store
// drops it while it loads node:sqlite, and the bin for its whole process; every other warning,
// experimental or not, is printed as before.

type EmitWarning = (warning: unknown, ...rest: unknown[]) => void;

/** Whether a `process.emitWarning(warning, ...rest)` call is node:sqlite's experimental warning. */
export function isSqliteExperimentalWarning(warning: unknown, rest: readonly unknown[]): boolean {
  const options = rest[0] as { type?: unknown } | string | undefined;
  const name =
    warning instanceof Error ? warning.name : ((options as { type?: unknown })?.type ?? options);
  const text = warning instanceof Error ? warning.message : String(warning);
  return name === "ExperimentalWarning" && /\bSQLite\b/i.test(text);
}

/** `emitWarning` without node:sqlite's experimental warning. */
export function dropSqliteWarning(emitWarning: EmitWarning): EmitWarning {
  return (warning, ...rest) => {
    if (!isSqliteExperimentalWarning(warning, rest)) emitWarning.call(process, warning, ...rest);
  };
}

/** Runs `body` (a synchronous load) with node:sqlite's experimental warning dropped. */
export function withoutSqliteWarning<T>(body: () => T): T {
  const runtime = globalThis.process;
  const emitWarning = runtime?.emitWarning as EmitWarning | undefined;
  if (typeof emitWarning !== "function") return body();
  runtime.emitWarning = dropSqliteWarning(emitWarning) as typeof runtime.emitWarning;
  try {
    return body();
  } finally {
    runtime.emitWarning = emitWarning as typeof runtime.emitWarning;
  }
}
