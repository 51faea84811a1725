import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { packProblems, promisedFiles } from "../../scripts/check-pack.mjs";

/** What `npm pack` would ship today, without running prepack (the build is check:package's). */
function packedFiles(): string[] {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return (JSON.parse(output) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
}

describe("scripts/check-pack.mjs", () => {
  it("builds before every pack, so that a pack from a clean clone holds dist/", () => {
    expect(pkg.scripts.prepack).toBe("npm run build");
    // check:package packs from a tree without dist/, through prepack, before anything reads dist/.
    expect(pkg.scripts["check:package"]).toMatch(/^node scripts\/check-pack\.mjs && /);
  });

  it("names every file that exports and bin promise", () => {
    const promised = promisedFiles(pkg);
    expect(promised).toContain("dist/cli/index.js");
    expect(promised).toContain("dist/provisioning/index.d.cts");
    expect(promised).not.toContain("package.json");
  });

  it("reports a tarball without dist/, as a pack without prepack made", () => {
    const problems = packProblems(["README.md", "package.json"], pkg);
    expect(problems).toContain("dist/cli/index.js is in exports or bin but not in the tarball");
    expect(problems).toContain(
      "dist/provisioning/index.js is in exports or bin but not in the tarball",
    );
  });

  it("reports a test file that no files entry names on purpose", () => {
    const complete = promisedFiles(pkg);
    expect(packProblems(complete, pkg)).toEqual([]);
    expect(packProblems([...complete, "examples/healthz/health.test.ts"], pkg)).toEqual([
      "examples/healthz/health.test.ts is a test file: the tarball ships only what a consumer needs",
    ]);
    expect(packProblems([...complete, "examples/msw-consumer/app.test.ts"], pkg)).toEqual([]);
    expect(packProblems([...complete, "src/cli/index.ts"], pkg)).toEqual([
      "src/cli/index.ts is the repository's, not the package's",
    ]);
  });

  it("finds nothing wrong with what package.json's files lets through, dist/ aside", () => {
    const files = packedFiles();
    const problems = packProblems(files, pkg).filter((problem) => !problem.startsWith("dist/"));
    expect(problems).toEqual([]);
    // Examples ship as source: the one whose tests are the example (msw-consumer) keeps them.
    expect(files).toContain("examples/servers/fastify.ts");
    expect(files).toContain("examples/msw-consumer/app.test.ts");
    expect(files.filter((path) => path.endsWith(".test.ts"))).toEqual([
      "examples/msw-consumer/app.test.ts",
      "examples/msw-consumer/provisioning.test.ts",
    ]);
  });
});
