import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  maxFileLines,
  maxFunctionLines,
  measure,
  overLimits,
  sourcesUnder,
} from "../../scripts/check-sizes.mjs";

const root = new URL("../..", import.meta.url).pathname;

/** A function of `lines` lines from its first to its last, whatever its lines hold. */
const functionOf = (name: string, lines: number) =>
  `export function ${name}() {\n${"  const x = 1;\n".repeat(lines - 2)}}\n`;

describe("scripts/check-sizes.mjs", () => {
  it("measures every function-like node from its first line to its last, nested ones inside", () => {
    const folder = mkdtempSync(join(tmpdir(), "sizes-"));
    try {
      const file = join(folder, "a.ts");
      writeFileSync(
        file,
        `export function outer() {\n\n  const inner = () => {\n    return 1;\n  };\n  return inner;\n}\n\nclass A {\n  method() {\n    return 2;\n  }\n}\n`,
      );
      const { nonBlank, functions } = measure(file);
      expect(nonBlank).toBe(11);
      expect(functions).toEqual([
        { name: "outer", line: 1, lines: 7 },
        { name: "inner", line: 3, lines: 3 },
        { name: "method", line: 10, lines: 3 },
      ]);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });

  it("finds what is above either limit, and nothing at it", () => {
    const folder = mkdtempSync(join(tmpdir(), "sizes-"));
    const file = join(folder, "a.ts");
    try {
      writeFileSync(file, functionOf("atLimit", maxFunctionLines));
      expect(overLimits([file])).toEqual([]);
      writeFileSync(file, functionOf("over", maxFunctionLines + 1));
      expect(overLimits([file])).toEqual([
        expect.stringMatching(/a\.ts:1 over: 151 lines \(limit 150\)$/),
      ]);
      writeFileSync(file, "export const a = 1;\n".repeat(maxFileLines));
      expect(overLimits([file])).toEqual([]);
      writeFileSync(file, "export const a = 1;\n\n".repeat(maxFileLines + 1));
      expect(overLimits([file])).toEqual([
        expect.stringMatching(/a\.ts: 451 non-blank lines \(limit 450\)$/),
      ]);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });

  it("holds for the whole of src/ (issue 41)", () => {
    const files = sourcesUnder(join(root, "src"));
    expect(files.length).toBeGreaterThan(200);
    expect(files.some((file) => file.includes("/scim/"))).toBe(true);
    expect(overLimits(files)).toEqual([]);
  });
});
