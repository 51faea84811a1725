import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Every import of every TypeScript file under `folder`: the importing file and where it points. */
function importsUnder(folder: string): { file: string; specifier: string; target: string }[] {
  const files = readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => /\.tsx?$/.test(name) && !name.includes("node_modules"))
    .map((name) => join(root, folder, name));
  return files.flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, "utf8"), true, true)
      .importedFiles.map(({ fileName: specifier }) => ({
        file: relative(root, file),
        specifier,
        target: specifier.startsWith(".")
          ? relative(root, resolve(file, "..", specifier))
          : specifier,
      })),
  );
}

describe("layering", () => {
  it("ships no code from examples/: nothing in src/ imports it", () => {
    const imports = importsUnder("src");
    expect(imports.length).toBeGreaterThan(100);
    expect(imports.filter(({ target }) => target.startsWith("examples"))).toEqual([]);
  });

  it("keeps examples to the public API: they import platform-integration/*, never the sources", () => {
    const imports = importsUnder("examples");
    expect(imports.some(({ specifier }) => specifier.startsWith("platform-integration/"))).toBe(
      true,
    );
    const outside = imports.filter(
      ({ specifier, target }) => specifier.startsWith(".") && !target.startsWith("examples"),
    );
    expect(outside).toEqual([]);
  });
});
