import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { exportNames, sourceOf } from "./entry-points.ts";
import pkg from "./package.json" with { type: "json" };

// Vitest prints that type tests are experimental and asks to pin its version, on every run: it is
// pinned (package.json: an exact version), so the line says nothing here.
process.env.VITEST_DISABLE_EXPERIMENTAL_LOG = "true";

export default defineConfig({
  define: { __SDK_VERSION__: JSON.stringify(pkg.version) },
  resolve: {
    // Examples import the package by name, as users do; tests run them against the sources.
    alias: exportNames.map((name) => ({
      find: `platform-integration/${name}`,
      replacement: fileURLToPath(new URL(sourceOf(name), import.meta.url)),
    })),
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // Type tests (*.test-d.ts) are checked by tsc, not run: an expectTypeOf that does not hold
    // fails the suite. tsconfig.type-tests.json gives tsc only those files and what they import.
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "tsconfig.type-tests.json",
    },
    // Names each suite that will skip here, and the variable or install that enables it.
    globalSetup: ["test/support/skipped-suites.ts"],
    // Generous: CI machines are shared, and no test here measures time.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
