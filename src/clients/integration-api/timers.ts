// Timers that let the process exit where they should, on every runtime.
/** The longest delay setTimeout honours; longer ones fire at once. */
export const maxTimerMs = 2_147_483_647;

/**
 * Lets the process exit while `timer` is pending: Node and Bun timers have `unref()`, Deno's are
 * numbers it unrefs through `Deno.unrefTimer`, other runtimes have no such notion.
 */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) {
    timer.unref();
  } else if (typeof timer === "number") {
    (globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno?.unrefTimer?.(timer);
  }
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts; never rejects. It holds the process open
 * only with `keepAlive` (a call that someone awaits), not for background work.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  { keepAlive = false }: { keepAlive?: boolean } = {},
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(ms, maxTimerMs));
    if (!keepAlive) unref(timer);
    signal?.addEventListener("abort", done, { once: true });
  });
}
