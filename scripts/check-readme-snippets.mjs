// Runs after the build (check:package): type-checks every TypeScript block of README.md against
// the built package, as a user who copies it would compile it, so that a renamed option or a
// changed signature fails the suite instead of the reader.
//
// A block is often a fragment of an application: it uses `app`, `store` or `handler` without
// declaring them. Each block is compiled as its own module under the repository's strict
// options, with `platform-integration/*` mapped to the built declarations (dist/*/index.d.ts).
// The SDK's exports and vitest's globals that a block uses without importing them are imported
// for it (the README shows most imports once per section); the names still undeclared after
// that are the fragment's context, typed as TypeScript types an unknown name (any error type),
// and listed, never counted as failures. Every other diagnostic fails: a wrong option, a wrong
// argument, a wrong property of a result.
//
// Usage: node scripts/check-readme-snippets.mjs [README.md] [dist]
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ts = createRequire(import.meta.url)("typescript");

/** Every ```ts block of a Markdown text, with the line it starts on (1-based). */
export function snippets(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== "```ts") continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && lines[end] !== "```") end++;
    blocks.push({ line: start + 1, code: `${lines.slice(start, end).join("\n")}\n` });
    index = end;
  }
  return blocks;
}

/** Export name to the subpath that exports it (the first, in the order of the folders). */
function exportMap(dist) {
  const map = new Map();
  for (const entry of readdirSync(dist, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    let text;
    try {
      text = readFileSync(join(dist, entry.name, "index.d.ts"), "utf8");
    } catch {
      continue;
    }
    for (const [, list] of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
      for (const item of list.split(",")) {
        const name = item
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .at(-1);
        if (name && !map.has(name)) map.set(name, `platform-integration/${entry.name}`);
      }
    }
    for (const [, name] of text.matchAll(
      /^export declare (?:function|const|class|abstract class) (\w+)/gm,
    )) {
      if (!map.has(name)) map.set(name, `platform-integration/${entry.name}`);
    }
  }
  return map;
}

const vitestGlobals = [
  "describe",
  "it",
  "test",
  "expect",
  "beforeAll",
  "beforeEach",
  "afterAll",
  "afterEach",
  "vi",
];
// "Cannot find name" in its forms (a test runner's, Bun's), and a shorthand property of no value.
const cannotFindName = new Set([2304, 2552, 2582, 2593, 2868, 18004]);
// A callback's parameter is implicitly any when the callee is a context name (`app.get(…)`).
const ofContext = new Set([7006, 7031]);

/** The diagnostics of a set of files, compiled together as separate modules. */
function compile(files, dist) {
  const options = {
    target: ts.ScriptTarget.ES2023,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    moduleDetection: ts.ModuleDetectionKind.Force,
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
    typeRoots: [join(root, "node_modules/@types")],
    baseUrl: root,
    paths: { "platform-integration/*": [join(dist, "*/index.d.ts")] },
  };
  const program = ts.createProgram([...files.keys()], options);
  const byFile = new Map();
  for (const file of files.keys()) {
    const source = program.getSourceFile(file);
    byFile.set(file, [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ]);
  }
  return byFile;
}

const message = (diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
const missingName = (diagnostic) =>
  /(?:Cannot find name|the shorthand property) '([^']+)'/.exec(message(diagnostic))?.[1];

/** The problems of each block: `{ line, problems: string[], context: string[] }`. */
export function checkSnippets(markdown, dist) {
  const blocks = snippets(markdown);
  const exports = exportMap(dist);
  // Inside the repository's node_modules, so that msw, vitest, pino... resolve as for a user.
  const folder = join(root, "node_modules/.cache/readme-snippets");
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  try {
    const files = new Map(blocks.map((block, index) => [join(folder, `block-${index}.ts`), block]));
    // A block of options (`mapping: { … },`) is not a statement: it is checked as an object's.
    const optionBlocks = new Set();
    const write = (imports) => {
      for (const [file, block] of files) {
        const lines = [...(imports.get(file) ?? [])];
        if (optionBlocks.has(file)) lines.push("void ({");
        lines.push(block.code.replace(/\n$/, ""));
        if (optionBlocks.has(file)) lines.push("});");
        writeFileSync(file, `${lines.join("\n")}\n`);
      }
    };
    for (const [file, block] of files) {
      const parsed = ts.transpileModule(block.code, { reportDiagnostics: true });
      if ((parsed.diagnostics ?? []).length > 0) optionBlocks.add(file);
    }
    write(new Map());
    // First pass: the names a block uses without importing them.
    const imports = new Map();
    for (const [file, diagnostics] of compile(files, dist)) {
      const wanted = new Map();
      for (const diagnostic of diagnostics) {
        if (!cannotFindName.has(diagnostic.code)) continue;
        const name = missingName(diagnostic);
        if (name === undefined) continue;
        const from = vitestGlobals.includes(name) ? "vitest" : exports.get(name);
        if (from === undefined) continue;
        wanted.set(from, new Set([...(wanted.get(from) ?? []), name]));
      }
      imports.set(
        file,
        [...wanted].map(([from, names]) => `import { ${[...names].join(", ")} } from "${from}";`),
      );
    }
    write(imports);
    const results = [];
    for (const [file, diagnostics] of compile(files, dist)) {
      const block = files.get(file);
      const offset = imports.get(file).length + (optionBlocks.has(file) ? 1 : 0);
      const problems = [];
      const context = new Set();
      for (const diagnostic of diagnostics) {
        const name = cannotFindName.has(diagnostic.code) ? missingName(diagnostic) : undefined;
        if (name !== undefined) {
          context.add(name);
          continue;
        }
        if (ofContext.has(diagnostic.code)) continue;
        const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
        problems.push(
          `README.md:${block.line + line - offset}: TS${diagnostic.code}: ${message(diagnostic)}`,
        );
      }
      results.push({ line: block.line, problems, context: [...context].sort() });
    }
    return results;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = process.argv[2] ?? join(root, "README.md");
  const dist = resolve(process.argv[3] ?? join(root, "dist"));
  const results = checkSnippets(readFileSync(readme, "utf8"), dist);
  const problems = results.flatMap((result) => result.problems);
  if (problems.length > 0) {
    console.error(`README snippets that do not compile against ${dist}:\n${problems.join("\n")}`);
    process.exit(1);
  }
  console.log(
    `README: ${results.length} TypeScript blocks compile against the built package (names taken as the fragment's context: ${[...new Set(results.flatMap((result) => result.context))].sort().join(", ") || "none"})`,
  );
}
