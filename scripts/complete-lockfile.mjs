// npm drops optional dependencies it could not fetch from the lockfile, and `npm ci` then rejects
// the lockfile as out of sync. Where a registry mirror lacks some platforms' binaries (this project's CI
// machines), run `node scripts/complete-lockfile.mjs` after `npm install`: it adds those entries
// back as optional, and `npm ci` skips them on platforms they are not for.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2] ?? "package-lock.json";
const lock = JSON.parse(readFileSync(file, "utf8"));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    // Platform binaries are pinned exactly; a range (fsevents' ~2.3.2) is met by any copy found.
    const version = spec.replace(/^[\^~=]/, "");
    const found = nearest(path, name);
    if (found && (spec !== version || lock.packages[found].version === version)) continue;
    // Hoisted when the top-level place is free, else beside the package that wants it.
    const hoisted = `node_modules/${name}`;
    const place = found || lock.packages[hoisted] ? `${path}/node_modules/${name}` : hoisted;
    lock.packages[place] = { version, ...(entry.dev ? { dev: true } : {}), optional: true };
    added++;
  }
}

// Node's resolution: the package's own node_modules, then each enclosing one up to the top.
function nearest(path, name) {
  const parts = path.split("/node_modules/").filter(Boolean);
  for (let depth = parts.length; depth >= 0; depth--) {
    const base = parts.slice(0, depth).join("/node_modules/");
    const place = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (lock.packages[place]) return place;
  }
  return undefined;
}

lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
  ),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} entries`);
