import { packageVersion } from "../internal/package-version.ts";
import { type Command, type CommandIo, UsageError } from "./command.ts";
import { commands as allCommands } from "./commands/index.ts";

const bin = "platform-integration";

/**
 * The CLI without the process: dispatches `argv` (without node and the script) to a command and
 * resolves with the exit status (0 done, 1 the work failed, 2 a wrong command line). The bin
 * calls it with the real streams; tests call it with their own.
 */
export async function run(
  argv: string[],
  io: CommandIo,
  commands: readonly Command[] = allCommands,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = commands.find((command) => name === "help" && command.name === args[0]);
    io.stdout.write(topic ? topic.usage : overview(commands));
    return 0;
  }
  if (name === "--version" || name === "-v") {
    io.stdout.write(`${packageVersion}\n`);
    return 0;
  }
  if (name === undefined) {
    io.stderr.write(overview(commands));
    return 2;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    const what = name.startsWith("-") ? "option" : "command";
    io.stderr.write(`${bin}: unknown ${what} "${name}"\nRun "${bin} --help" for the commands.\n`);
    return 2;
  }
  const optionsEnd = args.indexOf("--");
  const options = optionsEnd === -1 ? args : args.slice(0, optionsEnd);
  if (options.includes("--help") || options.includes("-h")) {
    io.stdout.write(command.usage);
    return 0;
  }
  // The global option keeps its meaning after a command too: no command takes --version.
  if (options.includes("--version")) {
    io.stdout.write(`${packageVersion}\n`);
    return 0;
  }
  const { outputClosed } = io;
  const stopsWithOutput = outputClosed !== undefined && command.servesUntilStopped !== true;
  const commandIo = stopsWithOutput
    ? { ...io, signal: AbortSignal.any([io.signal, outputClosed]) }
    : io;
  try {
    const status = await command.run(args, commandIo);
    // Nobody reads the outcome any more: ending quietly is the expected end of `| head`.
    return outputClosed?.aborted ? 0 : status;
  } catch (error) {
    if (error instanceof UsageError) {
      const usageLine = command.usage.split("\n", 1)[0];
      io.stderr.write(
        `${bin} ${name}: ${error.message}\n${usageLine}\nRun "${bin} ${name} --help" for its options.\n`,
      );
      return 2;
    }
    io.stderr.write(`${bin} ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const list = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `Usage: ${bin} <command> [options]

Tools for applications installed through the platform: check and exercise a Provisioning API.

Commands:
${list.join("\n")}

Options:
  -h, --help     Show this help (after a command: that command's help)
  -v, --version  Show the version

Exit status: 0 success, 1 the work failed (a check, a sync), 2 a wrong command line.
`;
}
