/** What a command writes to and reads from; tests pass their own. */
export interface CommandIo {
  stdout: {
    write(text: string): unknown;
    isTTY?: boolean | undefined;
    columns?: number | undefined;
  };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  /** Aborted on SIGINT or SIGTERM: a long-running command stops cleanly and returns. */
  signal: AbortSignal;
  /**
   * Aborted when stdout's reader went away (EPIPE, as after `| head -1`): run() then stops the
   * command through its `signal`, unless it {@link Command.servesUntilStopped}, and exits 0.
   */
  outputClosed?: AbortSignal;
}

/**
 * One subcommand of the `platform-integration` CLI. Exit codes: 0 success, 1 the work failed
 * (a check failed, a sync did not complete), 2 the command line was wrong ({@link UsageError}).
 */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The whole text that `--help` prints. */
  usage: string;
  run(args: string[], io: CommandIo): Promise<number>;
  /** A server that runs until stopped: it keeps running when its output is closed. */
  servesUntilStopped?: boolean;
}

/** A mistake in the command line: printed with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
