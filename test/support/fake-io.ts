import type { CommandIo } from "../../src/cli/command.ts";

/** A CommandIo that records what a command writes, for assertions on the CLI's output. */
export interface FakeIo extends CommandIo {
  readonly out: string;
  readonly err: string;
}

export function createFakeIo(
  options: { tty?: boolean; columns?: number; signal?: AbortSignal } = {},
): FakeIo {
  let out = "";
  let err = "";
  return {
    stdout: {
      write: (text: string) => {
        out += text;
        return true;
      },
      ...(options.tty && { isTTY: true }),
      ...(options.columns !== undefined && { columns: options.columns }),
    },
    stderr: {
      write: (text: string) => {
        err += text;
        return true;
      },
    },
    env: {},
    signal: options.signal ?? new AbortController().signal,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}
