// The first step of check:package: what `npm pack` and `npm publish` would put in the tarball,
// from a tree without dist/. It removes dist/ and packs (a dry run, so nothing is written): the
// `prepack` script must build, or the tarball would hold docs and no code, as it once did. Then it
// checks the list: every file package.json's exports and bin name is there, and no test file is,
// except those that a `files` entry names on purpose (an example that is a test). The build's own
// output must hold no declaration warning (scripts/check-build-warnings.mjs).
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { warningsProblem } from "./check-build-warnings.mjs";

/** Every path that `exports` and `bin` point at, without the leading "./". */
export function promisedFiles(pkg) {
  const paths = new Set();
  const walk = (value) => {
    if (typeof value === "string") {
      if (value.startsWith("./") && value !== "./package.json") paths.add(value.slice(2));
    } else if (value !== null && typeof value === "object") {
      for (const inner of Object.values(value)) walk(inner);
    }
  };
  walk(pkg.exports);
  walk(pkg.bin);
  return [...paths].sort();
}

/** A `files` entry with `*` and `**` as a regular expression over whole paths. */
function globPattern(entry) {
  const source = entry
    .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
    .replace(/\*\*\//g, "\u0000")
    .replace(/\*/g, "[^/]*")
    .replaceAll("\u0000", "(?:.*/)?");
  return new RegExp(`^${source}$`);
}

/** What is wrong with a tarball holding `files` (paths as `npm pack --json` lists them). */
export function packProblems(files, pkg) {
  const problems = [];
  const shipped = new Set(files);
  for (const path of promisedFiles(pkg)) {
    if (!shipped.has(path)) problems.push(`${path} is in exports or bin but not in the tarball`);
  }
  const wantedTests = pkg.files
    .filter((entry) => !entry.startsWith("!") && /\.test\.ts$/.test(entry))
    .map(globPattern);
  for (const path of files) {
    if (!/\.test(-d)?\.ts$/.test(path)) continue;
    if (!wantedTests.some((pattern) => pattern.test(path))) {
      problems.push(`${path} is a test file: the tarball ships only what a consumer needs`);
    }
  }
  for (const path of files) {
    if (/^(src|test|scripts|bench\/(?!README\.md$))/.test(path)) {
      problems.push(`${path} is the repository's, not the package's`);
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pkg = JSON.parse(readFileSync("package.json", "utf8"));
  rmSync("dist", { recursive: true, force: true });
  // npm prints the prepack script's output before the JSON: the list is the last array printed.
  const run = spawnSync("npm", ["pack", "--dry-run", "--json"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stderr.write(run.stderr);
  if (run.status !== 0) {
    process.stdout.write(run.stdout);
    console.error(`npm pack from a tree without dist/ failed (exit ${run.status ?? run.signal})`);
    process.exit(1);
  }
  const output = run.stdout;
  const warnings = warningsProblem(`${run.stdout}\n${run.stderr}`);
  if (warnings !== undefined) {
    console.error(`npm pack from a tree without dist/: ${warnings}`);
    process.exit(1);
  }
  const start = output.lastIndexOf("\n[\n");
  const [packed] = JSON.parse(output.slice(start === -1 ? 0 : start));
  const problems = packProblems(
    packed.files.map((file) => file.path),
    pkg,
  );
  if (problems.length > 0) {
    console.error(`npm pack from a tree without dist/:\n${problems.join("\n")}`);
    process.exit(1);
  }
  console.log(`npm pack from a tree without dist/: ${packed.files.length} files, dist/ built`);
}
