// Runs every benchmark under bench/ (files named *.bench.ts), one process each, so that one
// benchmark's heap and JIT state cannot colour another's figures.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

const folder = new URL(".", import.meta.url);
const benches = readdirSync(folder).filter((name) => name.endsWith(".bench.ts"));
const only = process.argv[2];
let failed = false;
for (const name of benches.filter((bench) => !only || bench.includes(only))) {
  console.log(`\n## ${name}`);
  // Arguments after the name go to each benchmark: `npm run bench -- initial-sync --users 10000`.
  const args = ["--expose-gc", new URL(name, folder).pathname, ...process.argv.slice(3)];
  const run = spawnSync(process.execPath, args, { stdio: "inherit" });
  failed ||= run.status !== 0;
}
process.exit(failed ? 1 : 0);
