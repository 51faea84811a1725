// `npm run mutate -- [name ...]`: StrykerJS over one source folder at a time (see
// stryker.config.mjs). Without a name it runs every folder in turn; it ends with each one's score.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { folders } from "../stryker.config.mjs";

const names = process.argv.slice(2);
const unknown = names.filter((name) => !(name in folders));
if (unknown.length > 0) {
  console.error(`Unknown folder "${unknown[0]}"; one of: ${Object.keys(folders).join(", ")}`);
  process.exit(2);
}
const scores = [];
for (const name of names.length > 0 ? names : Object.keys(folders)) {
  const run = spawnSync("npx", ["stryker", "run", "stryker.config.mjs"], {
    stdio: "inherit",
    env: { ...process.env, MUTATE_FOLDER: name },
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
  const report = JSON.parse(readFileSync(`reports/mutation/${name}.json`, "utf8"));
  const mutants = Object.values(report.files).flatMap((file) => file.mutants);
  const count = (...statuses) =>
    mutants.filter((mutant) => statuses.includes(mutant.status)).length;
  const killed = count("Killed", "Timeout");
  const survived = count("Survived", "NoCoverage");
  const score = `${((100 * killed) / (killed + survived)).toFixed(1)} %`;
  scores.push({ folder: folders[name], killed, survived, score });
}
console.table(scores);
