import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { tempDir } from "./spool-helpers.ts";

const root = new URL("../../../../", import.meta.url).pathname;
const runtimes = {
  bun: [`${root}node_modules/.bin/bun`, "run", "-"],
  deno: [`${root}node_modules/.bin/deno`, "run", "--allow-all", "-"],
} as const;

/** Records an event with a spool on `runtime`, then reopens the spool: it must still hold it. */
function spoolOn(runtime: keyof typeof runtimes, dir: string): Promise<string> {
  const [command, ...args] = runtimes[runtime];
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: root, timeout: 30_000 },
      (_error, stdout, stderr) => resolve(stdout + stderr),
    );
    child.stdin?.end(`
      globalThis.__SDK_VERSION__ = "0.0.0-test";
      const { createAuditClient } = await import(${JSON.stringify(`${root}src/clients/audit/index.ts`)});
      const options = { baseUrl: "http://127.0.0.1:9", spool: ${JSON.stringify(dir)}, onError() {} };
      const audit = createAuditClient(options);
      audit.record({ action: "a" });
      const persisted = await audit.persisted();
      await audit.close({ timeoutMs: 0 });
      const again = createAuditClient(options);
      console.log(JSON.stringify({ persisted, spooled: again.stats().spooled }));
      await again.close({ timeoutMs: 0 });
    `);
  });
}

describe("the spool on Bun and Deno", () => {
  it.each(["bun", "deno"] as const)("keeps an event across clients on %s", async (runtime) => {
    const output = await spoolOn(runtime, tempDir());
    expect(output.trim()).toBe('{"persisted":true,"spooled":1}');
  });
});
