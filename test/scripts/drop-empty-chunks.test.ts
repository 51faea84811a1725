import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../tsup.config.ts";

const script = new URL("../../scripts/drop-empty-chunks.mjs", import.meta.url).pathname;

describe("scripts/drop-empty-chunks.mjs", () => {
  it("deletes empty chunks and the bare imports of them, and nothing else", () => {
    const dist = mkdtempSync(join(tmpdir(), "dist-"));
    const files: Record<string, string> = {
      "chunk-EMPTY111.js": "\n",
      "chunk-EMPTY222.cjs": '"use strict";\n',
      "chunk-FULL3333.js": "export const a = 1;\n",
      "audit/index.js":
        "export { a } from '../chunk-FULL3333.js';\nimport '../chunk-EMPTY111.js';\nimport '../chunk-FULL3333.js';\n",
      "audit/index.cjs": "'use strict';\nrequire('../chunk-EMPTY222.cjs');\nmodule.exports = {};\n",
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dist, name, ".."), { recursive: true });
      writeFileSync(join(dist, name), text);
    }
    try {
      execFileSync(process.execPath, [script, dist]);
      expect(existsSync(join(dist, "chunk-EMPTY111.js"))).toBe(false);
      expect(existsSync(join(dist, "chunk-EMPTY222.cjs"))).toBe(false);
      expect(readFileSync(join(dist, "chunk-FULL3333.js"), "utf8")).toBe(
        files["chunk-FULL3333.js"],
      );
      expect(readFileSync(join(dist, "audit/index.js"), "utf8")).toBe(
        "export { a } from '../chunk-FULL3333.js';\nimport '../chunk-FULL3333.js';\n",
      );
      expect(readFileSync(join(dist, "audit/index.cjs"), "utf8")).toBe(
        "'use strict';\nmodule.exports = {};\n",
      );
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });
});

describe("tsup.config.ts", () => {
  it("builds the CLI as an ES module only: no CommonJS copy of it in the tarball", () => {
    const builds = config as Array<{ entry: Record<string, string>; format: string[] }>;
    const cli = builds.filter((build) => "cli/index" in build.entry);
    expect(cli.map((build) => build.format)).toEqual([["esm"]]);
    const cjs = builds.filter((build) => build.format.includes("cjs"));
    expect(cjs.length).toBeGreaterThan(0);
  });
});
