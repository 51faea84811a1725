import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { hasRuntime, runtimeBinary } from "../../integration-api/child-process.ts";
import { tempDir } from "./spool-helpers.ts";

const root = new URL("../../../../", import.meta.url).pathname;
const runtimes = {
  bun: [runtimeBinary("bun") ?? "bun", "run", "-"],
  deno: [runtimeBinary("deno") ?? "deno", "run", "--allow-all", "-"],
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
      globalThis.__PACKAGE_VERSION__ = "0.0.0-test";
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
  // Bun and Deno are installed by the CI step that runs them (hono-bun-deno.sh), not by npm ci.
  it.each(["bun", "deno"] as const)("keeps an event across clients on %s", async (runtime) => {
    if (!hasRuntime(runtime)) {
      expect(process.env.PLATFORM_INTEGRATION_REQUIRE_RUNTIMES, `${runtime} is required`).not.toBe(
        "1",
      );
      return;
    }
    const output = await spoolOn(runtime, tempDir());
    expect(output.trim()).toBe('{"persisted":true,"spooled":1}');
  });
});
