import { defineConfig } from "tsup";
import { exportNames, sourceOf } from "./entry-points.ts";
import pkg from "./package.json" with { type: "json" };

// dist/ keeps the flat subpath layout ("./node" is dist/node/index.js) whatever the source's group.
const entry = Object.fromEntries(exportNames.map((name) => [`${name}/index`, sourceOf(name)]));
const bin = "bin" in pkg ? { "cli/index": "src/cli/index.ts" } : {};

export default defineConfig({
  entry: { ...entry, ...bin },
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  splitting: true,
  treeshake: true,
  target: "es2023",
  platform: "node",
  sourcemap: false,
  // Deno resolves builtins only with the node: prefix.
  removeNodeProtocol: false,
  // No shims: with splitting, tsup's import.meta.url shim lives in a chunk of its own and names
  // that chunk, where the bin and the LDAP read worker, which start their own file again as a
  // worker thread, need their own file's URL. Without it the CommonJS build has each file's.
  shims: false,
  define: { __SDK_VERSION__: JSON.stringify(pkg.version) },
});
