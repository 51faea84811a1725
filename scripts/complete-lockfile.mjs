// npm drops optional dependencies it could not fetch from the lockfile, and `npm ci` then rejects
// the lockfile as out of sync. Where a registry mirror lacks some platforms' binaries (this project's CI
// machines), run `node scripts/complete-lockfile.mjs` after `npm install`: it adds those entries
// back as optional, and `npm ci` skips them on platforms they are not for.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2] ?? "package-lock.json";
const lock = JSON.parse(readFileSync(file, "utf8"));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ""}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    lock.packages[hoisted] = { version, ...(entry.dev ? { dev: true } : {}), optional: true };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
  ),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} entries`);
