import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import pkg from "../package.json" with { type: "json" };

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");

describe("package.json", () => {
  it("claims only the msw major that CI tests", () => {
    const major = (version: string) => /^\D*(\d+)/.exec(version)?.[1];
    expect(pkg.peerDependencies.msw).toBe("^3.0.0");
    expect(major(pkg.devDependencies.msw)).toBe("3");
    // The smoke test installs the packed tarball beside the same major.
    expect(read(".ci/smoke/run.sh")).toMatch(/ msw@3\.\d+\.\d+ /);
  });

  it("keeps Bun and Deno out of a contributor's npm ci; the CI steps that use them install them", () => {
    const dependencies = { ...pkg.devDependencies, ...pkg.dependencies } as Record<string, string>;
    expect(dependencies.bun).toBeUndefined();
    expect(dependencies.deno).toBeUndefined();
    expect(read(".ci/install-runtimes.sh")).toMatch(/bun@\d+\.\d+\.\d+ deno@\d+\.\d+\.\d+/);
    for (const user of [".ci/steps/hono-bun-deno.sh", ".ci/smoke/run.sh"]) {
      expect(read(user)).toContain(".ci/install-runtimes.sh");
      expect(read(user)).not.toMatch(/\$root\/node_modules\/\.bin\/(bun|deno)/);
    }
  });
});

describe("the test run's output", () => {
  it("has no line from vitest about type tests being experimental: vitest is pinned, as it asks", () => {
    expect(pkg.devDependencies.vitest).toMatch(/^\d+\.\d+\.\d+$/);
    expect(read("vitest.config.ts")).toMatch(
      /^process\.env\.VITEST_DISABLE_EXPERIMENTAL_LOG = "true";$/m,
    );
    // The variable vitest reads before it warns, in the version installed.
    const vitestDist = new URL("../node_modules/vitest/dist/chunks/", import.meta.url);
    const chunks = readdirSync(vitestDist).map((name) =>
      readFileSync(new URL(name, vitestDist), "utf8"),
    );
    expect(
      chunks.some((text) => text.includes("!process.env.VITEST_DISABLE_EXPERIMENTAL_LOG")),
    ).toBe(true);
  });
});
