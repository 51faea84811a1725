// Mutation testing: `npm run mutate -- <folder>` (scripts/mutate.mjs) runs one folder at a time,
// incrementally, because the whole of src/ does not finish in 40 minutes on a 2-core machine.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.config.ts" },
  coverageAnalysis: "perTest",
  // Mutants in module-level constants are covered by every test; running them all costs the most
  // time for the least information.
  ignoreStatic: true,
  incremental: true,
  reporters: ["clear-text", "progress", "json"],
  thresholds: { high: 80, low: 60, break: null },
  timeoutMS: 10_000,
  tempDirName: ".stryker-tmp",
  ignorePatterns: ["dist", "docs/api", ".ci/.work", "reports", "bench"],
};
