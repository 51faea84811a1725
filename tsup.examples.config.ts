import { defineConfig } from "tsup";
import { bin, common, library } from "./tsup.config.ts";

// `npm run demo` and `npm run example:*`: the ES modules the examples import, without the
// declarations and the CommonJS build (the slow part of `npm run build`, which they never read).
export default defineConfig({
  ...common,
  entry: { ...library, ...bin },
  format: ["esm"],
  dts: false,
});
