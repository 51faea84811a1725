import { execFile } from "node:child_process";

const root = new URL("../../../", import.meta.url).pathname;
const bin = `${root}node_modules/.bin/`;
// Each reads the module from stdin.
const commands = {
  // Node 22 warns that type stripping is experimental; the output must stay clean.
  node: [process.execPath, "--disable-warning=ExperimentalWarning", "--input-type=module", "-"],
  bun: [`${bin}bun`, "run", "-"],
  deno: [`${bin}deno`, "run", "--allow-net", "--allow-env", "--allow-read", "--allow-sys", "-"],
} as const;

/**
 * Runs `code` as an ES module in a new process of `runtime`, with the SDK's sources at hand
 * (`src` holds their folder URL), and resolves with its exit code and output once it exits by
 * itself (or is killed after 15 s).
 */
export function runModule(
  code: string,
  runtime: keyof typeof commands = "node",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const src = new URL("src/", new URL(root, "file:")).href;
  const [command, ...args] = commands[runtime];
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
