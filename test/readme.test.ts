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

  it("links into docs/, examples/ and bench/ absolutely, so that the links work from the package's page", () => {
    const repository = pkg.homepage.replace(/#readme$/, "");
    expect(pkg.repository.url).toBe(`git+${repository}.git`);
    expect(pkg.bugs.url).toBe(`${repository}/issues`);
    expect(readme).not.toMatch(/\]\((\.\/)?(docs|examples)\//);
    const links = [...readme.matchAll(/\]\((https:[^)\s]+)\)/g)].map((match) => match[1] ?? "");
    const internal = links.filter((link) => link.startsWith(repository));
    expect(internal.length).toBeGreaterThan(5);
    for (const link of internal) {
      // A file (with an extension) is a blob, a folder a tree.
      expect(link).toMatch(
        new RegExp(
          `^${repository}/(blob/main/(docs|examples|bench)/\\S+\\.\\w+(#[\\w-]+)?|tree/main/examples/[\\w/-]+)$`,
        ),
      );
    }
  });

  it("says which Node the SDK needs, as engines does", () => {
    expect(pkg.engines.node).toBe(">=22.13");
    expect(readme).toContain("The SDK needs Node 22.13 or later");
  });
});
