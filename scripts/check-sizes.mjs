// `node scripts/check-sizes.mjs [folder ...] [--list N]`: the size rule of src/ (issue 41) checked
// with the TypeScript compiler's parser: no function over 150 lines, no file over 450 non-blank
// lines. A function is any function-like node (declaration, expression, arrow, method,
// constructor, accessor), counted from its first line to its last, nested ones inside included:
// a closure that holds a reader's whole file is what the rule is about. Exits 1 above a limit.
// `--list N` also prints every function of N lines or more, largest first, without failing on them.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

export const maxFunctionLines = 150;
export const maxFileLines = 450;

/** Every .ts file under `folder`, declaration files left out. */
export function sourcesUnder(folder) {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .map((name) => join(folder, name))
    .sort();
}

/** A readable name for a function-like node: its own, or the variable or property it is bound to. */
function nameOf(node, source) {
  if (node.name !== undefined) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (
    parent !== undefined &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
  ) {
    return parent.name.getText(source);
  }
  return "(anonymous)";
}

/** The file's non-blank line count and each function's length in lines. */
export function measure(file) {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const functions = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      functions.push({ name: nameOf(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const nonBlank = text.split("\n").filter((line) => line.trim() !== "").length;
  return { nonBlank, functions };
}

/** What in `files` is over a limit, one line each. */
export function overLimits(files) {
  const over = [];
  for (const file of files) {
    const name = relative(process.cwd(), file);
    const { nonBlank, functions } = measure(file);
    if (nonBlank > maxFileLines) {
      over.push(`${name}: ${nonBlank} non-blank lines (limit ${maxFileLines})`);
    }
    for (const fn of functions) {
      if (fn.lines > maxFunctionLines) {
        over.push(`${name}:${fn.line} ${fn.name}: ${fn.lines} lines (limit ${maxFunctionLines})`);
      }
    }
  }
  return over;
}

function main(argv) {
  const listAt = argv.indexOf("--list");
  const list = listAt === -1 ? undefined : Number(argv[listAt + 1]);
  const folders = argv.filter(
    (_, index) => listAt === -1 || (index !== listAt && index !== listAt + 1),
  );
  const files = (folders.length > 0 ? folders : ["src"]).flatMap(sourcesUnder);
  if (list !== undefined) {
    const listed = files.flatMap((file) =>
      measure(file)
        .functions.filter((fn) => fn.lines >= list)
        .map((fn) => ({ ...fn, file: relative(process.cwd(), file) })),
    );
    for (const fn of listed.sort((a, b) => b.lines - a.lines)) {
      console.log(`${String(fn.lines).padStart(4)}  ${fn.file}:${fn.line} ${fn.name}`);
    }
  }
  const over = overLimits(files);
  if (over.length > 0) {
    console.error(`Over the size limits of src/ (docs/design.md):\n  ${over.join("\n  ")}`);
    process.exitCode = 1;
  } else {
    console.log(
      `${files.length} files: no function over ${maxFunctionLines} lines, no file over ${maxFileLines} non-blank lines`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main(process.argv.slice(2));
