/**
 * The package's version, which tsup writes in at build time. Where the sources run as they are
 * (Bun or Deno reading them through the repository's tsconfig paths, a test runner without the
 * define) the global does not exist: "source" then, rather than a ReferenceError at import.
 */
export const packageVersion: string =
  typeof __PACKAGE_VERSION__ === "string" ? __PACKAGE_VERSION__ : "source";
