// Runs after `npm run build` (check:package): the public declarations of the production entries
// keep out of the testing kit, as their sources do (.dependency-cruiser.json's
// testing-kit-only-for-tests). A declaration bundler may place a type that two entries share in
// the entry that exports it, so that `./ldap`'s types would need `./testing` installed and read;
// this catches it in the built files, where the source rule cannot see.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

// The folder is an argument for the tests; the build passes none.
const dist = process.argv[2] ?? "dist";

/** Each production entry, the entries its declarations may not reach, and words they may not hold. */
const rules = [
  {
    entry: "ldap",
    forbiddenEntries: ["testing", "msw"],
    forbiddenWords: /\bfaults?\b|injectFault|withFaults/i,
  },
  {
    entry: "scim",
    forbiddenEntries: ["testing", "msw"],
    forbiddenWords: /\binjectFault|withFaults\b/,
  },
];

/** Every declaration file `file` reaches through relative imports, itself included. */
function reachable(file, seen = new Set()) {
  if (seen.has(file) || !existsSync(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const [, specifier] of text.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = normalize(join(dirname(file), specifier)).replace(/\.(c?)js$/, ".d.$1ts");
    reachable(target, seen);
  }
  return seen;
}

const problems = [];
for (const { entry, forbiddenEntries, forbiddenWords } of rules) {
  for (const extension of [".d.ts", ".d.cts"]) {
    const index = join(dist, entry, `index${extension}`);
    if (!existsSync(index)) {
      problems.push(`${relative(dist, index)} is missing: run npm run build first`);
      continue;
    }
    for (const file of reachable(index)) {
      const name = relative(dist, file);
      const room = forbiddenEntries.find((other) => name.startsWith(`${other}/`));
      if (room !== undefined) {
        problems.push(`./${entry}'s declarations reach ./${room}'s: ${name}`);
      }
      const word = forbiddenWords.exec(readFileSync(file, "utf8"));
      if (word !== null) problems.push(`./${entry}'s declarations name "${word[0]}" in ${name}`);
    }
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
