// node:sqlite is loaded through process.getBuiltinModule rather than a static import: a runtime
// without it would otherwise fail while linking the module, with an error that names neither the
// package nor what to do, and a static import cannot be caught.
type NodeSqlite = typeof import("node:sqlite");

/**
 * The `node:sqlite` module, or an error that says what `platform-integration/sqlite` needs: Node
 * 22.13 or later (where node:sqlite needs no flag), or a runtime that provides node:sqlite.
 */
export function loadNodeSqlite(): NodeSqlite {
  const runtime = globalThis.process;
  let sqlite: NodeSqlite | undefined;
  try {
    sqlite = runtime?.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined;
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
