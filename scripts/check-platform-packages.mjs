// `npm test` runs it after `npm ci`: no installed package may be for another platform (its
// package.json's `os`, `cpu` or `libc` excludes this machine). One would mean that the lockfile
// lost those fields and every machine installs every platform's binaries (scripts/complete-lockfile.mjs).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Whether a package's `os`/`cpu`/`libc` lists admit this platform (npm's rules: `!x` excludes). */
export function admits(list, value) {
  if (!Array.isArray(list) || list.length === 0) return true;
  if (list.includes(`!${value}`)) return false;
  const allowed = list.filter((entry) => !entry.startsWith("!"));
  return allowed.length === 0 || (value !== undefined && allowed.includes(value));
}

/** The packages under `root` (a node_modules folder, nested ones too) not for this platform. */
export function foreignPackages(root, platform = currentPlatform()) {
  const foreign = [];
  const visit = (folder) => {
    for (const entry of safeReaddir(folder)) {
      if (entry.startsWith(".")) continue;
      if (entry.startsWith("@")) {
        for (const scoped of safeReaddir(join(folder, entry)))
          visitPackage(join(folder, entry, scoped));
      } else visitPackage(join(folder, entry));
    }
  };
  const visitPackage = (dir) => {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    } catch {
      return;
    }
    const ok =
      admits(manifest.os, platform.os) &&
      admits(manifest.cpu, platform.cpu) &&
      (platform.os !== "linux" || admits(manifest.libc, platform.libc));
    if (!ok) foreign.push(`${manifest.name}@${manifest.version} (${dir})`);
    visit(join(dir, "node_modules"));
  };
  visit(root);
  return foreign;
}

function currentPlatform() {
  const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
  return { os: process.platform, cpu: process.arch, libc: glibc ? "glibc" : "musl" };
}

function safeReaddir(folder) {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const foreign = foreignPackages(process.argv[2] ?? "node_modules");
  if (foreign.length > 0) {
    console.error(
      `${foreign.length} installed packages are for another platform; package-lock.json lacks their os/cpu/libc (see scripts/complete-lockfile.mjs):\n  ${foreign.join("\n  ")}`,
    );
    process.exit(1);
  }
  console.log("No package for another platform is installed.");
}
