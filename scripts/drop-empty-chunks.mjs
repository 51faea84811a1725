// Runs after tsup (`npm run build`): esbuild's code splitting leaves a chunk for a module whose
// code was all tree-shaken away (one holding only types and constants that got inlined), and
// every entry imports it for its side effects, which it has none of. This deletes such chunks and
// the bare imports of them, so that the tarball carries no empty files.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

// The folder is an argument for the tests; the build passes none.
const dist = process.argv[2] ?? "dist";
const code = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) =>
  /\.c?js$/.test(file),
);
const isEmpty = (text) => text.replace(/(["'])use strict\1;?/g, "").trim() === "";

const empty = new Set(
  code.filter((file) => !file.includes("/") && isEmpty(readFileSync(join(dist, file), "utf8"))),
);
for (const file of code) {
  if (empty.has(file)) continue;
  const path = join(dist, file);
  const text = readFileSync(path, "utf8");
  const kept = text
    .split("\n")
    .filter((line) => {
      const bare = /^(?:import\s*|require\()\s*(["'])(?:\.\.?\/)+([^"']+)\1\)?;?\s*$/.exec(line);
      return !(bare && empty.has(basename(bare[2] ?? "")));
    })
    .join("\n");
  if (kept !== text) writeFileSync(path, kept);
}
for (const file of empty) rmSync(join(dist, file));
if (empty.size > 0) console.log(`dropped ${empty.size} empty chunks: ${[...empty].join(", ")}`);
