import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockApi } from "../cli/start-mock-api.ts";
import { startScript } from "./integration-api/child-process.ts";

const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");

/** The first TypeScript block of a README section, exactly as users copy it. */
function snippet(heading: string): string {
  const section = readme.slice(readme.indexOf(`\n## ${heading}\n`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (match?.[1] === undefined) throw new Error(`No snippet under ${heading}`);
  return match[1];
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "readme-snippets-"));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

describe.each(["http", "https"] as const)("the README's client snippets over %s", (scheme) => {
  async function run(code: string, env: Record<string, string> = {}) {
    const certFile = join(folder, `${scheme}-ca.pem`);
    const https = scheme === "https" ? ["--https", "--cert-out", certFile] : [];
    const mock = await startMockApi(["--port", "0", "--updates", "1", ...https]);
    try {
      expect(mock.baseUrl).toMatch(new RegExp(`^${scheme}://`));
      const script = await startScript(code, {
        PLATFORM_INTEGRATIONAPI: mock.baseUrl,
        PLATFORM_CA: scheme === "https" ? await readFile(certFile, "utf8") : undefined,
        ...env,
      });
      const exitCode = await script.exited;
      return {
        code: exitCode,
        stdout: script.stdout(),
        stderr: script.stderr(),
        mock: mock.stdout(),
      };
    } finally {
      await mock.stop();
    }
  }

  it("runs the Version API snippet as written, through apply()", async () => {
    const result = await run(snippet("Version API"), { APPLY_UPDATE: "yes" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      "1.0.0",
      expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:]{8}\.\d{7}Z$/),
      "2 1.0.1",
      "now running 1.0.1",
      "",
    ]);
  });

  it("runs the Audit API snippet as written, delivering its event before exit", async () => {
    const result = await run(snippet("Audit API"));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.mock).toContain("audit user.login.success");
  });
});
