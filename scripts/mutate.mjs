// `npm run mutate -- [name ...]`: StrykerJS over one source folder at a time, each with its own
// incremental file under reports/mutation/, so a rerun only tests mutants whose code or tests
// changed. Without a name it runs every folder below in turn and prints the score of each.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const folders = {
  provisioning: "src/provisioning",
  audit: "src/clients/audit",
  "integration-api": "src/clients/integration-api",
};
const names = process.argv.slice(2);
for (const name of names) {
  if (!(name in folders)) {
    console.error(`Unknown folder "${name}"; one of: ${Object.keys(folders).join(", ")}`);
    process.exit(2);
  }
}
const scores = [];
for (const name of names.length > 0 ? names : Object.keys(folders)) {
  const report = `reports/mutation/${name}.json`;
  const run = spawnSync(
    "npx",
    [
      "stryker",
      "run",
      "stryker.config.mjs",
      "--mutate",
      `${folders[name]}/**/*.ts`,
      "--incrementalFile",
      `reports/mutation/${name}.incremental.json`,
      "--jsonReporter.fileName",
      report,
    ],
    { stdio: "inherit" },
  );
  if (run.status !== 0) process.exit(run.status ?? 1);
  const files = Object.values(JSON.parse(readFileSync(report, "utf8")).files);
  const mutants = files.flatMap((file) => file.mutants);
  const count = (status) => mutants.filter((mutant) => mutant.status === status).length;
  const killed = count("Killed") + count("Timeout");
  const survived = count("Survived") + count("NoCoverage");
  scores.push({
    folder: folders[name],
    killed,
    survived,
    score: (100 * killed) / (killed + survived),
  });
}
console.table(scores.map((s) => ({ ...s, score: `${s.score.toFixed(1)} %` })));
