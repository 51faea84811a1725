import type { CommandIo } from "./command.ts";

/** Shows how far a long task is: see {@link createProgress}. */
export interface Progress {
  update(done: number, total: number): void;
  /** Ends the bar's line; call it once the task stops, whether it completed or not. */
  finish(): void;
}

/**
 * On a terminal, a bar redrawn in place (carriage return) whenever the whole percentage changes;
 * otherwise (a pipe, a CI log) a plain line at every tenth. Both are bounded, whatever the total.
 */
export function createProgress(io: CommandIo, label: string): Progress {
  const tty = io.stdout.isTTY === true;
  let shown = -1;
  let drawn = false;
  return {
    update(done, total) {
      if (total <= 0) return;
      const percent = Math.floor((done / total) * 100);
      const step = tty ? percent : Math.floor(percent / 10) * 10;
      if (step === shown) return;
      shown = step;
      if (!tty) {
        io.stdout.write(`${label}: ${String(percent).padStart(3)}%  ${done}/${total}\n`);
        return;
      }
      // Every frame has the same length, or a shorter one would leave the tail of the last.
      const counts = `${String(percent).padStart(3)}%  ${String(done).padStart(String(total).length)}/${total}`;
      const room = (io.stdout.columns ?? 80) - label.length - counts.length - 5;
      const size = Math.max(10, Math.min(40, room));
      const filled = Math.floor((done / total) * size);
      io.stdout.write(`\r${label} [${"#".repeat(filled)}${"-".repeat(size - filled)}] ${counts}`);
      drawn = true;
    },
    finish() {
      if (drawn) io.stdout.write("\n");
      drawn = false;
    },
  };
}
