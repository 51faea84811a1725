import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { declarationWarnings, warningsProblem } from "../../scripts/check-build-warnings.mjs";

// Issue 40, finding 8: every build printed six of these, and nothing failed.
const warning =
  '[plugin dts] Entry "license/index.d.ts" still references private shared type exports with no public re-export: LicenseFieldRead, RecordOf, licenseFieldValueRecord, licenseRecord. rollup-plugin-dts will not invent new public exports for these types. Re-export them from a public entry to avoid downstream TS2742 errors.';
const clean = [
  "CLI Building entry: {...}",
  "\u001b[34mDTS\u001b[39m Build start",
  "DTS ⚡️ Build success in 56597ms",
  "DTS dist/license/index.d.ts           11.95 KB",
].join("\n");

describe("scripts/check-build-warnings.mjs", () => {
  it("finds the dts plugin's warning in a build's output, coloured or not", () => {
    expect(declarationWarnings(`${clean}\n${warning}\n`)).toEqual([warning]);
    expect(declarationWarnings(`${clean}\n\u001b[33m${warning}\u001b[39m\n`)).toEqual([warning]);
    expect(warningsProblem(`${clean}\n${warning}`)).toMatch(/1 declaration warning/);
  });

  it("finds a TypeScript diagnostic", () => {
    const diagnostic = "src/x.ts(3,1): error TS2742: The inferred type of 'x' cannot be named";
    expect(declarationWarnings(diagnostic)).toEqual([diagnostic]);
  });

  it("passes a build that printed none", () => {
    expect(declarationWarnings(clean)).toEqual([]);
    expect(warningsProblem(clean)).toBeUndefined();
  });

  it("runs on the build that npm pack runs in check:package", () => {
    const checkPack = readFileSync(
      new URL("../../scripts/check-pack.mjs", import.meta.url),
      "utf8",
    );
    expect(checkPack).toContain('import { warningsProblem } from "./check-build-warnings.mjs";');
    expect(checkPack).toMatch(/warningsProblem\(`\$\{run\.stdout\}\\n\$\{run\.stderr\}`\)/);
  });
});
