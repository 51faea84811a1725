import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import pkg from "./package.json" with { type: "json" };

export default defineConfig({
  define: { __SDK_VERSION__: JSON.stringify(pkg.version) },
  resolve: {
    // Examples import the package by name, as users do; tests run them against the sources.
    alias: [
      {
        find: /^platform-integration\/(.+)$/,
        replacement: fileURLToPath(new URL("./src/$1/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
