import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isSqliteExperimentalWarning } from "../../src/internal/sqlite-warning.ts";

const loader = new URL("../../src/stores/sqlite/load-node-sqlite.ts", import.meta.url).href;

/** A fresh Node process (type stripping for the source) running `code`; its stderr. */
function stderrOf(code: string): string {
  const child = spawnSync(process.execPath, ["--input-type=module", "-"], {
    input: code,
    encoding: "utf8",
  });
  expect(child.status, child.stderr).toBe(0);
  return child.stderr;
}

describe("node:sqlite's experimental warning", () => {
  it("is dropped while the SQLite store loads node:sqlite, and no other warning is", () => {
    const stderr = stderrOf(
      `import { loadNodeSqlite } from ${JSON.stringify(loader)};
       loadNodeSqlite();
       process.emitWarning("Something else is an experimental feature", "ExperimentalWarning");
       process.emitWarning(new Error("SQLite: a deprecation of the application's own"));`,
    );
    expect(stderr).not.toMatch(/SQLite is an experimental feature/);
    expect(stderr).toContain("ExperimentalWarning: Something else is an experimental feature");
    expect(stderr).toContain("SQLite: a deprecation of the application's own");
  });

  it("is printed as usual by a process that loads node:sqlite itself", () => {
    // The baseline: the warning this filter is for does appear without it (Node 22 and 24).
    const stderr = stderrOf(`process.getBuiltinModule("node:sqlite");`);
    expect(stderr).toMatch(/ExperimentalWarning: SQLite is an experimental feature/);
  });

  it("is recognised by its type and its text, in either form of emitWarning", () => {
    const message = "SQLite is an experimental feature and might change at any time";
    expect(isSqliteExperimentalWarning(message, ["ExperimentalWarning"])).toBe(true);
    expect(isSqliteExperimentalWarning(message, [{ type: "ExperimentalWarning" }])).toBe(true);
    const error = Object.assign(new Error(message), { name: "ExperimentalWarning" });
    expect(isSqliteExperimentalWarning(error, [])).toBe(true);
    expect(isSqliteExperimentalWarning(message, ["DeprecationWarning"])).toBe(false);
    expect(
      isSqliteExperimentalWarning("Type Stripping is experimental", ["ExperimentalWarning"]),
    ).toBe(false);
    expect(isSqliteExperimentalWarning(new Error(message), [])).toBe(false);
  });
});
