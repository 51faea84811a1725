// The exports map is the single list of entries, as in tsup.config.ts; entry-points.ts says where
// each one's source lives. Output: docs/api (not committed).
import { exportNames, sourceOf } from "./entry-points.ts";

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  entryPoints: exportNames.map(sourceOf),
  out: "docs/api",
  tsconfig: "tsconfig.json",
  // No repository URL yet to link sources to.
  disableSources: true,
  // A warning is an internal name in a public declaration or a link to one: CI fails on it.
  treatWarningsAsErrors: true,
};
