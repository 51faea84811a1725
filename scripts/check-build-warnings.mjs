// Part of check:package (scripts/check-pack.mjs passes it the output of the build that `npm pack`
// runs): a warning printed while tsup bundles the declarations fails the check. The dts plugin
// prints one when an entry's declarations take a type from a shared chunk that no entry exports
// (`[plugin dts] Entry "license/index.d.ts" still references private shared type exports…`): a
// consumer whose own declarations need that type then gets TS2742, a name it cannot import. A
// warning in the log of every build is a warning nobody reads, so there are none.
//
// Usage: node scripts/check-build-warnings.mjs <log>  (the output of `npm run build`, 2>&1)
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colours are what it strips.
const colours = /\u001b\[[0-9;]*m/g;

/** The lines of a build's output that are declaration warnings: a rollup plugin's, or tsc's. */
export function declarationWarnings(output) {
  return output
    .replace(colours, "")
    .split("\n")
    .filter((line) => /^\s*\[plugin [^\]]+\]|\bTS\d{4,5}\b/.test(line))
    .map((line) => line.trim());
}

/** The message that fails the check, or undefined when the build printed no warning. */
export function warningsProblem(output) {
  const warnings = declarationWarnings(output);
  if (warnings.length === 0) return undefined;
  return `the build printed ${warnings.length} declaration warning(s); an entry's declarations may name only zod, type-fest and what some entry exports:\n${warnings.join("\n")}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const log = process.argv[2];
  if (log === undefined) {
    console.error("usage: node scripts/check-build-warnings.mjs <build log>");
    process.exit(2);
  }
  const problem = warningsProblem(readFileSync(log, "utf8"));
  if (problem !== undefined) {
    console.error(problem);
    process.exit(1);
  }
  console.log("The build printed no declaration warning.");
}
