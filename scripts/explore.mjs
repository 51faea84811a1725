// `npm run explore -- [--steps N] [--seed S] [vitest filters...]`: the model-based tests
// (test/**/*.model.test.ts) for about N commands each, from a fresh seed unless one is given.
// Not in CI; a failure prints its seed and path (see test/support/exploration.ts).
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  options: { steps: { type: "string", default: "2000" }, seed: { type: "string" } },
  allowPositionals: true,
});
const steps = Number(values.steps);
if (!Number.isInteger(steps) || steps <= 0) {
  console.error(`--steps takes a positive whole number, not "${values.steps}"`);
  process.exit(2);
}
const env = { ...process.env, PLATFORM_INTEGRATION_EXPLORE_STEPS: String(steps) };
if (values.seed !== undefined) env.PLATFORM_INTEGRATION_EXPLORE_SEED = values.seed;
const filters = positionals.length > 0 ? positionals : ["model.test"];
const run = spawnSync(
  process.execPath,
  ["node_modules/vitest/vitest.mjs", "run", "--testTimeout=21600000", ...filters],
  { stdio: "inherit", env },
);
process.exit(run.status ?? 1);
