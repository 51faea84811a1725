// node:sqlite is loaded through process.getBuiltinModule rather than a static import: a runtime
// without it would otherwise fail while linking the module, with an error that names neither the
// package nor what to do, and a static import cannot be caught.
import { withoutSqliteWarning } from "../../internal/sqlite-warning.ts";

type NodeSqlite = typeof import("node:sqlite");

/**
 * The `node:sqlite` module, or an error that says what `platform-integration/sqlite` needs: Node
 * 22.13 or later (where node:sqlite needs no flag), or a runtime that provides node:sqlite.
 * Node's "SQLite is an experimental feature" warning is dropped while it loads (only that one):
 * it would print in every run of an application and of its tests, and says nothing to act on.
 */
export function loadNodeSqlite(): NodeSqlite {
  const runtime = globalThis.process;
  let sqlite: NodeSqlite | undefined;
  try {
    sqlite = withoutSqliteWarning(
      () => runtime?.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined,
    );
  } catch {
    // Node 22.5 to 22.12 keep node:sqlite behind --experimental-sqlite.
  }
  if (sqlite?.DatabaseSync === undefined) {
    const version = runtime?.versions?.node ? `Node ${runtime.versions.node}` : "this runtime";
    throw new Error(
      `platform-integration/sqlite needs the built-in module node:sqlite, which ${version} does ` +
        "not provide: run Node 22.13 or later (or a Bun or Deno that has node:sqlite), or use " +
        "platform-integration/postgres or your own UserStore.",
    );
  }
  return sqlite;
}
