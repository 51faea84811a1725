import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sourceOf } from "../../../entry-points.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Bun's or Deno's binary: from PLATFORM_INTEGRATION_BUN or PLATFORM_INTEGRATION_DENO (which the
 * CI step that installs them sets), else from node_modules/.bin when a contributor installed it
 * there; undefined when absent, as after a plain `npm ci`, which downloads neither.
 */
export function runtimeBinary(name: "bun" | "deno"): string | undefined {
  const configured = process.env[`PLATFORM_INTEGRATION_${name.toUpperCase()}`];
  if (configured) return configured;
  const local = `${root}node_modules/.bin/${name}`;
  return existsSync(local) ? local : undefined;
}

// Each reads the module from stdin.
const commands = {
  // Node 22 warns that type stripping is experimental; the output must stay clean.
  node: [process.execPath, "--disable-warning=ExperimentalWarning", "--input-type=module", "-"],
  bun: [runtimeBinary("bun"), "run", "-"],
  deno: [
    runtimeBinary("deno"),
    "run",
    "--allow-net",
    "--allow-env",
    "--allow-read",
    "--allow-sys",
    "-",
  ],
} as const;

/** A runtime the tests can run modules on. */
export type Runtime = keyof typeof commands;

/** Whether `runtime` is installed here (Node always is). */
export function hasRuntime(runtime: Runtime): boolean {
  return commands[runtime][0] !== undefined;
}

/**
 * Runs `code` as an ES module in a new process of `runtime`, with the SDK's sources at hand
 * (`src` holds their folder URL), and resolves with its exit code and output once it exits by
 * itself (or is killed after 15 s).
 */
export function runModule(
  code: string,
  runtime: Runtime = "node",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const src = new URL("src/", new URL(root, "file:")).href;
  const [command, ...args] = commands[runtime];
  if (command === undefined) throw new Error(`${runtime} is not installed: see hasRuntime()`);
  return new Promise((resolve) => {
    // From the package's folder, where Deno finds package.json and so resolves dependencies in node_modules.
    const child = execFile(
      command,
      args,
      { cwd: root, timeout: 15_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : null) : 0,
          stdout,
          stderr,
        });
      },
    );
    child.stdin?.end(
      `globalThis.__PACKAGE_VERSION__ = "0.0.0-test"; const src = ${JSON.stringify(src)};\n${code}`,
    );
  });
}

/** A script started by {@link startScript}. */
export interface RunningScript {
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** Whether the process is still running. */
  running(): boolean;
  /** Resolves with the exit code once the process ends by itself. */
  exited: Promise<number | null>;
  /** Ends the process (SIGTERM) and resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Starts TypeScript `code` as written for users (importing `platform-integration/*`) in a new
 * Node process, with those imports pointed at the SDK's sources; `env` replaces the environment
 * variables it names (undefined removes one).
 */
export async function startScript(
  code: string,
  env: Record<string, string | undefined> = {},
): Promise<RunningScript> {
  const folder = await mkdtemp(join(tmpdir(), "platform-integration-script-"));
  const file = join(folder, "main.ts");
  const rewritten = code.replace(/(["'])platform-integration\/([\w-]+)\1/g, (_, _quote, name) =>
    JSON.stringify(pathToFileURL(join(root, sourceOf(name))).href),
  );
  await writeFile(file, rewritten);
  const environment: Record<string, string | undefined> = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete environment[name];
    else environment[name] = value;
  }
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      "--import",
      `data:text/javascript,globalThis.__PACKAGE_VERSION__ = "0.0.0-test";`,
      file,
    ],
    { cwd: root, env: environment, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on("close", (code) => {
      void rm(folder, { recursive: true, force: true });
      resolve(code);
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
