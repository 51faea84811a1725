// Mutation testing, one source folder at a time (`npm run mutate -- <name>`, scripts/mutate.mjs),
// each with its own incremental file, because a run over the whole of src/ does not finish in
// 40 minutes on a 2-core machine. The folder comes from MUTATE_FOLDER.
//
// Each folder runs only the tests of its own concern (listed in vitest.mutate.config.ts), not
// vitest's `related` tests: those pull in the example servers, the CLI's child
// processes and the database tests, which cover little in-process and made a run take hours.

/** The folders that `npm run mutate` knows, by name. */
export const folders = {
  provisioning: "src/provisioning",
  users: "src/users",
  audit: "src/clients/audit",
  "integration-api": "src/clients/integration-api",
  ip: "src/internal/ip",
  sync: "src/sync",
  platform: "src/platform",
};

const name = process.env.MUTATE_FOLDER ?? "provisioning";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutate.config.ts", related: false },
  mutate: [`${folders[name]}/**/*.ts`],
  coverageAnalysis: "perTest",
  // Mutants in module-level constants are covered by every test; running them all costs the most
  // time for the least information.
  ignoreStatic: true,
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  thresholds: { high: 80, low: 60, break: null },
  // Two test runners: the machines are 2-core and shared.
  concurrency: 2,
  // Added to 1.5 times the covering tests' own time. Audit's 5 s: without its soak test, its
  // slowest test takes under 3 s, and most of its mutants that time out are delivery loops that
  // never end, which waited the full 10 s each.
  timeoutMS: name === "audit" ? 5_000 : 10_000,
  tempDirName: ".stryker-tmp",
  ignorePatterns: ["dist", "docs/api", ".ci/.work", "reports", "bench"],
};
