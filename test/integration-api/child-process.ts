import { execFile } from "node:child_process";

/**
 * Runs `code` as an ES module in a new Node process that has the SDK's sources at hand (`src`
 * is their folder URL), and resolves with its exit code and output once it exits by itself.
 */
export function runModule(
  code: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const src = new URL("../../src/", import.meta.url).href;
  const module = `globalThis.__SDK_VERSION__ = "0.0.0-test"; const src = ${JSON.stringify(src)};\n${code}`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--input-type=module", "--eval", module],
      { timeout: 15_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : null) : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}
