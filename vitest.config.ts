import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
import { exportNames, sourceOf } from "./entry-points.ts";
import pkg from "./package.json" with { type: "json" };

// Vitest prints that type tests are experimental and asks to pin its version, on every run: it is
// pinned (package.json: an exact version), so the line says nothing here.
process.env.VITEST_DISABLE_EXPERIMENTAL_LOG = "true";

const testFiles = ["test/**/*.test.ts", "examples/**/*.test.ts"];

/**
 * The test files that need a fresh module graph and a process of their own: each changes what
 * the files after it in a shared worker would see. Every other file runs in workers that stay up
 * from one file to the next (isolate: false), which saves a worker's start-up and the import of
 * the same sources per file. A file that starts to mock a module, set a variable of process.env,
 * patch a global or listen to the process belongs here.
 */
const isolatedFiles = [
  // Module mocks (vi.mock, vi.doMock, vi.resetModules) and stubbed globals or variables.
  "examples/msw-consumer/*.test.ts",
  "test/clients/audit/exit-hooks.test.ts",
  "test/clients/audit/newer-install.test.ts",
  "test/clients/audit/spool/spool-lock.test.ts",
  "test/clients/audit/spool/spool.test.ts",
  "test/clients/integration-api/base-url.test.ts",
  "test/clients/integration-api/http.test.ts",
  "test/clients/integration-api/record-rename.test.ts",
  "test/clients/license/signature-examples.test.ts",
  "test/clients/sdk-api/differences.test.ts",
  "test/clients/sdk-api/probe.test.ts",
  "test/clients/sdk-api/service-behaviour.test.ts",
  "test/clients/version/version-client.test.ts",
  "test/internal/telemetry.test.ts",
  "test/stores/sqlite.test.ts",
  // The sources imported under a changed global (JSON.rawJSON removed): a shared worker would
  // hand back the modules another file imported.
  "test/provisioning/wire-without-raw-json.test.ts",
  // process.env written.
  "test/clients/audit-pg-boss/pg-boss-audit.test.ts",
  // msw's server, which patches the globals that send requests, and other patched globals.
  "test/cli/bin.test.ts",
  "test/cli/closed-output.test.ts",
  "test/cli/never-answers.test.ts",
  "test/clients/app/app-client.test.ts",
  "test/clients/audit/audit-client.test.ts",
  "test/clients/audit/spool/runtimes.test.ts",
  "test/clients/console/console-client.test.ts",
  "test/clients/identity/identity-client.test.ts",
  "test/clients/license/license-client.test.ts",
  "test/clients/sdk-api/mapped-calls.test.ts",
  "test/msw/handlers.test.ts",
  "test/testing/fake-sdk-api-facts.test.ts",
  // Listeners on the process (exit, signals, warnings), whose once-per-process state a file
  // before would have spent.
  "test/clients/audit/spool/audit-client-spool.test.ts",
  "test/clients/audit/spool/spool-exit.test.ts",
  "test/clients/audit/spool/spool.model.test.ts",
  "test/internal/sqlite-warning.test.ts",
  "test/ldap/read-worker.test.ts",
  "test/sync/acknowledged-state.test.ts",
];

export default defineConfig({
  define: { __PACKAGE_VERSION__: JSON.stringify(pkg.version) },
  resolve: {
    // Examples import the package by name, as users do; tests run them against the sources.
    alias: exportNames.map((name) => ({
      find: `platform-integration/${name}`,
      replacement: fileURLToPath(new URL(sourceOf(name), import.meta.url)),
    })),
  },
  test: {
    // Names each suite that will skip here, and the variable or install that enables it.
    globalSetup: ["test/support/skipped-suites.ts"],
    // Generous: CI machines are shared, and no test here measures time.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    projects: [
      {
        test: {
          name: "shared",
          include: testFiles,
          exclude: [...configDefaults.exclude, ...isolatedFiles],
          isolate: false,
          // Type tests (*.test-d.ts) are checked by tsc, not run: an expectTypeOf that does not
          // hold fails the suite. tsconfig.type-tests.json gives tsc only those files and what
          // they import.
          typecheck: {
            enabled: true,
            include: ["test/**/*.test-d.ts"],
            tsconfig: "tsconfig.type-tests.json",
          },
        },
      },
      { test: { name: "isolated", include: isolatedFiles } },
    ],
  },
});
