import { execFile } from "node:child_process";
import { existsSync } from "node:fs";

const root = new URL("../../../", import.meta.url).pathname;

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
      `globalThis.__SDK_VERSION__ = "0.0.0-test"; const src = ${JSON.stringify(src)};\n${code}`,
    );
  });
}
