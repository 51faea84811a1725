import { existsSync } from "node:fs";
import pkg from "./package.json" with { type: "json" };

/**
 * Where each subpath export's source lives. The exports map is the single list of entries;
 * entries of a kind with three or more members sit in a group folder (`./node` is built from
 * src/adapters/node/index.ts), so the top of src/ stays readable while subpaths stay flat.
 * tsconfig.json's `paths` lists the same groups, as JSON cannot import this file.
 */
export const entryGroups = ["", "adapters/", "clients/", "stores/"] as const;

/** The source file of the export `./name`, relative to the project root. */
export function sourceOf(name: string): string {
  for (const group of entryGroups) {
    const file = `src/${group}${name}/index.ts`;
    if (existsSync(new URL(file, import.meta.url))) return file;
  }
  throw new Error(`No source for the export "./${name}" under src/{${entryGroups.join(",")}}`);
}

/** Every subpath export's name ("provisioning", "node", ...), from package.json. */
export const exportNames = Object.keys(pkg.exports)
  .filter((subpath) => subpath !== "./package.json")
  .map((subpath) => subpath.slice(2));
