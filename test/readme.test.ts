import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import pkg from "../package.json" with { type: "json" };

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("shows the quick start exactly as examples/quick-start/server.ts, which tsc checks", () => {
    const quickStart = readFileSync(
      new URL("../examples/quick-start/server.ts", import.meta.url),
      "utf8",
    );
    expect(readme).toContain(`\`\`\`ts\n${quickStart}\`\`\``);
  });

  it("lists every subpath export in its table", () => {
    const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== "./package.json");
    for (const subpath of subpaths) {
      expect(readme).toMatch(
        new RegExp(`^\\| \`platform-integration/${subpath.slice(2)}\` +\\|`, "m"),
      );
    }
  });

  it("names the test command that .ci/run runs", () => {
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");
    expect(readme).toContain("npm ci && npm test");
    expect(ci).toMatch(/^npm ci$/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});
