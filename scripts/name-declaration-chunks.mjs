// Runs after tsup (`npm run build`): gives the shared declaration chunks in dist/ the name of the
// module they come from, without the content hash (`user-record-C7RmSbNm.d.ts` becomes
// `user-record.d.ts`), so that "go to definition" lands in a file whose name says what it holds.
//
// tsup 9 writes declaration chunks with a fixed `chunkFileNames: "[name]-[hash]"` and no option to
// change it (node_modules/tsup/dist/rollup.js). The hash only busts caches, which a package
// installed from the registry does not need: a new version is a new directory. Two chunks with
// the same module name would collide; the build then stops and says which source file to rename.
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The folder is an argument for the tests; the build passes none.
const dist = process.argv[2] ?? "dist";
// rollup's hashes are 8 characters of base64url.
const hashed = /^(?<name>.+)-[\w-]{8}(?<extension>\.d\.c?ts)$/;

const declarationFiles = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) =>
  /\.d\.c?ts$/.test(file),
);

/** Old chunk file name to new, for the chunks at the top of dist/. */
const renames = new Map();
const owners = new Map();
for (const file of declarationFiles) {
  const match = hashed.exec(file);
  if (match?.groups === undefined || file.includes("/")) continue;
  const readable = `${match.groups.name}${match.groups.extension}`;
  const owner = owners.get(readable);
  if (owner !== undefined) {
    console.error(
      `dist/${owner} and dist/${file} would both be dist/${readable}: two source modules named ` +
        `"${match.groups.name}.ts" end up in shared declaration chunks; rename one of them.`,
    );
    process.exit(1);
  }
  owners.set(readable, file);
  renames.set(file, readable);
}

// Imports name a chunk by its JavaScript twin: './user-record-C7RmSbNm.js' or '../….cjs'.
const specifiers = new Map(
  [...renames].map(([from, to]) => [
    from.replace(/\.d\.(c?)ts$/, ".$1js"),
    to.replace(/\.d\.(c?)ts$/, ".$1js"),
  ]),
);
const reference = /(?<=["'](?:\.\.?\/)+)[^"'/]+\.c?js(?=["'])/g;
for (const file of declarationFiles) {
  const path = join(dist, file);
  const text = readFileSync(path, "utf8");
  const renamed = text.replace(reference, (specifier) => specifiers.get(specifier) ?? specifier);
  if (renamed !== text) writeFileSync(path, renamed);
}
for (const [from, to] of renames) renameSync(join(dist, from), join(dist, to));
