import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { type Command, UsageError } from "../../src/cli/command.ts";
import { commands } from "../../src/cli/commands/index.ts";
import { run } from "../../src/cli/run.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { serveFetchHandler } from "../support/serve-fetch-handler.ts";

/** A command that records its arguments and does what `behaviour` says. */
function fakeCommand(behaviour: (args: string[]) => Promise<number>) {
  const calls: string[][] = [];
  const command: Command = {
    name: "fake",
    summary: "A command for tests",
    usage: "Usage: platform-integration fake\n",
    run: (args) => {
      calls.push(args);
      return behaviour(args);
    },
  };
  return { command, calls };
}

describe("run", () => {
  it("lists every command with --help, -h and help", async () => {
    for (const flag of ["--help", "-h", "help"]) {
      const io = createFakeIo();
      expect(await run([flag], io)).toBe(0);
      expect(io.out).toMatch(/^Usage: platform-integration <command> \[options\]/);
      for (const command of commands) {
        expect(io.out).toContain(`  ${command.name}  `);
        expect(io.out).toContain(command.summary);
      }
    }
  });

  it("prints the overview on stderr and exits 2 without a command", async () => {
    const io = createFakeIo();
    expect(await run([], io)).toBe(2);
    expect(io.err).toMatch(/^Usage: platform-integration/);
    expect(io.out).toBe("");
  });

  it("prints the package version", async () => {
    for (const flag of ["--version", "-v"]) {
      const io = createFakeIo();
      expect(await run([flag], io)).toBe(0);
      expect(io.out).toBe(`${pkg.version}\n`);
    }
  });

  it("refuses an unknown command or option with exit 2 and a pointer to --help", async () => {
    const io = createFakeIo();
    expect(await run(["simulte", "http://x"], io)).toBe(2);
    expect(io.err).toBe(
      'platform-integration: unknown command "simulte"\nRun "platform-integration --help" for the commands.\n',
    );
    const option = createFakeIo();
    expect(await run(["--verbose"], option)).toBe(2);
    expect(option.err).toMatch(/^platform-integration: unknown option "--verbose"/);
  });

  it("prints the package version for --version after a command too: no command shadows it", async () => {
    for (const name of commands.map((command) => command.name)) {
      const io = createFakeIo();
      expect(await run([name, "--version"], io), name).toBe(0);
      expect(io.out).toBe(`${pkg.version}\n`);
    }
  });

  it("refuses an unknown option of a command in one line, with the command's usage line", async () => {
    const io = createFakeIo();
    expect(await run(["conformance", "http://127.0.0.1:1", "--verbose"], io)).toBe(2);
    expect(io.err).toBe(
      "platform-integration conformance: unknown option --verbose\n" +
        "Usage: platform-integration conformance <url> [options]\n" +
        'Run "platform-integration conformance --help" for its options.\n',
    );
    const missing = createFakeIo();
    expect(await run(["simulate", "http://127.0.0.1:1", "--users"], missing)).toBe(2);
    expect(missing.err).toMatch(/^platform-integration simulate: --users needs a value\n/);
    const extra = createFakeIo();
    expect(await run(["conformance", "http://127.0.0.1:1", "--json=yes"], extra)).toBe(2);
    expect(extra.err).toMatch(/^platform-integration conformance: --json takes no value\n/);
  });

  it("says in the overview that mock-api fakes the six Integration APIs", async () => {
    const io = createFakeIo();
    await run(["--help"], io);
    expect(io.out).toMatch(/mock-api +.*Version, Audit, Identity, Status, License, Console/);
  });

  it("ends every command's --help with its exit status", () => {
    for (const command of commands) expect(command.usage, command.name).toMatch(/\nExit status: /);
  });

  it("prints a command's usage for --help, -h or help <command>, without running it", async () => {
    const { command, calls } = fakeCommand(async () => 0);
    for (const argv of [
      ["fake", "--help"],
      ["fake", "x", "-h"],
      ["help", "fake"],
    ]) {
      const io = createFakeIo();
      expect(await run(argv, io, [command])).toBe(0);
      expect(io.out).toBe(command.usage);
    }
    expect(calls).toEqual([]);
  });

  it("passes arguments after -- through, --help included", async () => {
    const { command, calls } = fakeCommand(async () => 0);
    expect(await run(["fake", "--", "--help"], createFakeIo(), [command])).toBe(0);
    expect(calls).toEqual([["--", "--help"]]);
  });

  it("returns the command's status", async () => {
    const { command } = fakeCommand(async () => 1);
    expect(await run(["fake"], createFakeIo(), [command])).toBe(1);
  });

  it("turns a UsageError into exit 2 with the command's --help pointer", async () => {
    const { command } = fakeCommand(async () => {
      throw new UsageError("Missing <url>");
    });
    const io = createFakeIo();
    expect(await run(["fake"], io, [command])).toBe(2);
    expect(io.err).toBe(
      'platform-integration fake: Missing <url>\nUsage: platform-integration fake\nRun "platform-integration fake --help" for its options.\n',
    );
  });

  it("turns any other error into exit 1 with its message", async () => {
    const { command } = fakeCommand(async () => {
      throw new Error("disk full");
    });
    const io = createFakeIo();
    expect(await run(["fake"], io, [command])).toBe(1);
    expect(io.err).toBe("platform-integration fake: disk full\n");
  });

  it("gives every command a summary and a usage that starts with its command line", () => {
    expect(commands.map((command) => command.name)).toEqual(
      expect.arrayContaining(["conformance", "simulate"]),
    );
    for (const command of commands) {
      expect(command.summary.length).toBeGreaterThan(10);
      expect(command.usage).toMatch(new RegExp(`^Usage: platform-integration ${command.name} `));
    }
  });
});

describe("the bin (src/cli/index.ts)", () => {
  const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;

  it("loads no command's heavy modules up front: --help warns of nothing (node:sqlite)", async () => {
    const child = spawn(process.execPath, [bin, "--help"], { stdio: "pipe" });
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(err).toBe("");
  });

  it("exits with run's status", async () => {
    const child = spawn(process.execPath, [bin, "nonsense"], { stdio: "pipe" });
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(err).toContain('unknown command "nonsense"');
  });

  it("stops a command cleanly on SIGINT: it reports and exits 1", async () => {
    // An application that accepts connections and never answers: the sync waits until SIGINT.
    const server = await serveFetchHandler(() => new Promise<Response>(() => {}));
    try {
      const child = spawn(process.execPath, [bin, "simulate", server.url, "--users", "3"], {
        stdio: "pipe",
      });
      let out = "";
      let interrupted = false;
      child.stdout.on("data", (chunk) => {
        out += chunk;
        // Once only: a second SIGINT meets Node's default handler, by design.
        if (!interrupted && out.includes("Simulating")) interrupted = child.kill("SIGINT");
      });
      const [code] = await once(child, "exit");
      expect(code).toBe(1);
      expect(out).toMatch(/Sync interrupted at ping \(attempt 1\): aborted/);
    } finally {
      await server.close();
    }
  });
});
