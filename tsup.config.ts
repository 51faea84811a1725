import { defineConfig } from "tsup";
import pkg from "./package.json" with { type: "json" };

// The exports map is the single list of entries: "./provisioning" is built from src/provisioning/index.ts.
const entry = Object.fromEntries(
  Object.keys(pkg.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => [`${subpath.slice(2)}/index`, `src/${subpath.slice(2)}/index.ts`]),
);
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
  define: { __SDK_VERSION__: JSON.stringify(pkg.version) },
});
