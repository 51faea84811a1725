// npm drops optional dependencies it could not fetch from the lockfile, and `npm ci` then rejects
// the lockfile as out of sync. Where a registry mirror lacks some platforms' binaries, run
// `node scripts/complete-lockfile.mjs` after `npm install`: it adds those entries back as
// optional, with the `os`, `cpu` and `libc` that their names state (the napi-rs convention of
// biome, rollup, rolldown and esbuild: @scope/name-linux-x64-gnu). Without those fields `npm ci`
// would install every platform's binary on every machine, about 1 GiB; a package whose name
// states no platform is refused, to be added by `npm install` where the registry has it.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const oses = [
  "android",
  "darwin",
  "freebsd",
  "linux",
  "openbsd",
  "openharmony",
  "win32",
  "sunos",
  "aix",
  "netbsd",
];
const cpus = [
  "arm64",
  "arm",
  "x64",
  "ia32",
  "loong64",
  "ppc64",
  "riscv64",
  "s390x",
  "mips64el",
  "wasm32",
];

/**
 * The `os`, `cpu` and `libc` fields that a platform package's name states, or undefined when it
 * states no platform: `linux-x64-musl` is { os: linux, cpu: x64, libc: musl }, `linux-x64-gnu`
 * glibc, a bare `linux-x64` no libc, `wasm32-wasi` { cpu: wasm32 }.
 */
export function platformOf(name) {
  const base = name.slice(name.lastIndexOf("/") + 1);
  if (/(?:^|-)wasm32-wasi$/.test(base)) return { cpu: ["wasm32"] };
  const pattern = new RegExp(`(?:^|-)(${oses.join("|")})-(${cpus.join("|")})(?:-(\\w+))?$`);
  const match = pattern.exec(base);
  if (!match) return undefined;
  const [, os, cpu, abi = ""] = match;
  // Only a suffix states the C library: a bare linux-x64 may be a static binary (esbuild's).
  const libc =
    os !== "linux" ? undefined : /musl/.test(abi) ? "musl" : /gnu/.test(abi) ? "glibc" : undefined;
  return { os: [os], cpu: [cpu], ...(libc && { libc: [libc] }) };
}

/** Adds the missing optional entries to a parsed lockfile; returns their paths. */
export function completeLockfile(lock) {
  const added = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      // Platform binaries are pinned exactly; a range (fsevents' ~2.3.2) is met by any copy found.
      const version = spec.replace(/^[\^~=]/, "");
      const found = nearest(lock, path, name);
      if (found && (spec !== version || lock.packages[found].version === version)) continue;
      const platform = platformOf(name);
      if (platform === undefined) {
        throw new Error(
          `${name}@${version} (optional, of ${path || "the project"}) names no platform: run npm install where the registry has it.`,
        );
      }
      // Hoisted when the top-level place is free, else beside the package that wants it.
      const hoisted = `node_modules/${name}`;
      const place = found || lock.packages[hoisted] ? `${path}/node_modules/${name}` : hoisted;
      lock.packages[place] = {
        version,
        ...(entry.dev ? { dev: true } : {}),
        optional: true,
        ...platform,
      };
      added.push(place);
    }
  }
  lock.packages = Object.fromEntries(
    Object.entries(lock.packages).sort(([a], [b]) =>
      a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
    ),
  );
  return added;
}

// Node's resolution: the package's own node_modules, then each enclosing one up to the top.
function nearest(lock, path, name) {
  const parts = path.split("/node_modules/").filter(Boolean);
  for (let depth = parts.length; depth >= 0; depth--) {
    const base = parts.slice(0, depth).join("/node_modules/");
    const place = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (lock.packages[place]) return place;
  }
  return undefined;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const file = process.argv[2] ?? "package-lock.json";
  const lock = JSON.parse(readFileSync(file, "utf8"));
  const added = completeLockfile(lock);
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`added ${added.length} entries`);
}
