import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mockApiCommand } from "../../src/cli/commands/mock-api.ts";
import { startScript } from "./integration-api/child-process.ts";

const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");

/** The first TypeScript block of a README section, exactly as users copy it. */
function snippet(heading: string): string {
  const section = readme.slice(readme.indexOf(`\n## ${heading}\n`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (match?.[1] === undefined) throw new Error(`No snippet under ${heading}`);
  return match[1];
}

/** Serves `mock-api` in this process with `args`; resolves with its URL, output and stop(). */
async function startMockApi(args: string[]) {
  const controller = new AbortController();
  let output = "";
  let announce: (url: string) => void = () => {};
  const announced = new Promise<string>((resolve) => {
    announce = resolve;
  });
  const io = {
    stdout: {
      write(text: string) {
        output += text;
        const match = /export PLATFORM_INTEGRATIONAPI=(\S+)/.exec(output);
        if (match?.[1]) announce(match[1]);
      },
    },
    stderr: {
      write(text: string) {
        output += text;
      },
    },
    env: {},
    signal: controller.signal,
  };
  const exit = mockApiCommand.run(["--port", "0", "--updates", "1", ...args], io);
  const url = await Promise.race([announced, exit.then((code) => `exited with ${code}`)]);
  return { url, output: () => output, stop: () => (controller.abort(), exit) };
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "readme-snippets-"));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

describe.each(["http", "https"] as const)("the README's client snippets over %s", (scheme) => {
  async function run(code: string, env: Record<string, string> = {}) {
    const certFile = join(folder, `${scheme}-ca.pem`);
    const mock = await startMockApi(scheme === "https" ? ["--https", "--cert-out", certFile] : []);
    try {
      expect(mock.url).toMatch(new RegExp(`^${scheme}://`));
      const script = await startScript(code, {
        PLATFORM_INTEGRATIONAPI: mock.url,
        PLATFORM_CA: scheme === "https" ? await readFile(certFile, "utf8") : undefined,
        ...env,
      });
      const exitCode = await script.exited;
      return {
        code: exitCode,
        stdout: script.stdout(),
        stderr: script.stderr(),
        mock: mock.output(),
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
