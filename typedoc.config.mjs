// The exports map is the single list of entries, as in tsup.config.ts: "./provisioning" is
// documented from src/provisioning/index.ts. Output: docs/api (not committed).
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8"));

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  entryPoints: Object.keys(pkg.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => `src/${subpath.slice(2)}/index.ts`),
  out: "docs/api",
  tsconfig: "tsconfig.json",
  // No repository URL yet to link sources to.
  disableSources: true,
};
