import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../../../", import.meta.url);
const src = new URL("src/", root).href;

/** A Node child process running an ES module, with the SDK's sources at `src`. */
export interface NodeChild {
  pid: number;
  /** Resolves with the first stdout line that satisfies `test`. */
  line(test: (line: string) => boolean): Promise<string>;
  /** Resolves when the process has exited, with its code (null after a signal) and output. */
  exited: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts `code` as an ES module in a new Node process (through bash, so that `ulimit -f` can
 * bound the size of files it writes, in KiB).
 */
export function startNode(code: string, options: { fileSizeKiB?: number } = {}): NodeChild {
  const limit = options.fileSizeKiB === undefined ? "" : `ulimit -f ${options.fileSizeKiB}; `;
  const node = `exec "${process.execPath}" --disable-warning=ExperimentalWarning --input-type=module -`;
  // Node's compile cache keeps the type-stripped sources between children: a start takes a
  // fraction of the time on a loaded machine.
  const env = {
    ...process.env,
    NODE_COMPILE_CACHE: join(tmpdir(), "platform-integration-node-cache"),
  };
  const child = spawn("bash", ["-c", `${limit}${node}`], { cwd: root, stdio: "pipe", env });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{
    code: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  child.stdin.end(
    `globalThis.__PACKAGE_VERSION__ = "0.0.0-test"; const src = ${JSON.stringify(src)};\n${code}`,
  );
  return {
    pid: child.pid as number,
    line: (test) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.split("\n").find(test);
          if (found !== undefined) {
            listeners.delete(check);
            resolve(found);
          }
        };
        listeners.add(check);
        void exited.then((result) =>
          reject(new Error(`The child exited (${result.code ?? result.signal}): ${result.stderr}`)),
        );
        check();
      }),
    exited,
    kill: (signal) => child.kill(signal),
  };
}
