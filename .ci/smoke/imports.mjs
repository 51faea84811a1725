import { createRequire } from "node:module";

const entries = createRequire(import.meta.url)("./entries.cjs");
for (const entry of entries) {
  const module = await import(entry);
  if (Object.keys(module).length === 0) throw new Error(`${entry} has no exports (ESM)`);
}
console.log(`ESM ok on ${process.version}: ${entries.join(", ")}`);
