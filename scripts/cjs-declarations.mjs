// Runs after tsup and name-declaration-chunks (`npm run build`): writes the CommonJS build's
// declarations (`.d.cts`) from the ES build's (`.d.ts`). They are the same declarations, the
// relative imports naming `.cjs` files instead of `.js`; tsup would type-check and bundle the
// sources a second time to write them, which took half of the build's time.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A `.d.ts` file's text as its `.d.cts` twin: every relative `.js` specifier made `.cjs`. */
export function toCommonJsDeclaration(text) {
  return text.replace(/(["'])(\.{1,2}\/[^"'\n]*)\.js\1/g, "$1$2.cjs$1");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // The folder is an argument for the tests; the build passes none.
  const dist = process.argv[2] ?? "dist";
  const declarations = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".d.ts"),
  );
  for (const file of declarations) {
    const text = readFileSync(join(dist, file), "utf8");
    writeFileSync(join(dist, file.replace(/\.d\.ts$/, ".d.cts")), toCommonJsDeclaration(text));
  }
}
