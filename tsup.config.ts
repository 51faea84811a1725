import { join } from "node:path";
import type { Plugin } from "esbuild";
import { defineConfig, type Options } from "tsup";
import { exportNames, sourceOf } from "./entry-points.ts";
import pkg from "./package.json" with { type: "json" };

// dist/ keeps the flat subpath layout ("./node" is dist/node/index.js) whatever the source's group.
export const library = Object.fromEntries(
  exportNames.map((name) => [`${name}/index`, sourceOf(name)]),
);
export const bin = "bin" in pkg ? { "cli/index": "src/cli/index.ts" } : {};

export const common: Options = {
  // `npm run build` empties dist/ first: the two builds below run side by side.
  clean: false,
  splitting: true,
  treeshake: true,
  target: "es2023",
  platform: "node",
  sourcemap: false,
  // Deno resolves builtins only with the node: prefix.
  removeNodeProtocol: false,
  // No shims: with splitting, tsup's import.meta.url shim lives in a chunk of its own and names
  // that chunk, where the bin and the LDAP read worker, which start their own file again as a
  // worker thread, need their own file's URL.
  shims: false,
  define: { __PACKAGE_VERSION__: JSON.stringify(pkg.version) },
};

/**
 * The CommonJS build's own loaders, where the ES build awaits a module at the top level (which
 * CommonJS cannot): src/msw/load-msw.ts becomes src/msw/require-msw.ts.
 */
export const commonJsLoaders: Plugin = {
  name: "commonjs-loaders",
  setup(build) {
    build.onResolve({ filter: /^\.\/load-msw\.ts$/ }, (args) => ({
      path: join(args.resolveDir, "require-msw.ts"),
    }));
  },
};

export default defineConfig([
  // The bin is an ES module only: `npx` and the `bin` field run it as one, so a CommonJS copy of
  // the CLI would only weigh on every install.
  { ...common, entry: { ...library, ...bin }, format: ["esm"], dts: { entry: library } },
  // Its declarations are the ES build's, with .cjs imports (scripts/cjs-declarations.mjs).
  {
    ...common,
    entry: library,
    format: ["cjs"],
    esbuildPlugins: [commonJsLoaders],
  },
]);
