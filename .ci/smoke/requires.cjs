const entries = require("./entries.cjs");
for (const entry of entries) {
  const module = require(entry);
  if (Object.keys(module).length === 0) throw new Error(`${entry} has no exports (CJS)`);
}
console.log(`CJS ok on ${process.version}: ${entries.join(", ")}`);
