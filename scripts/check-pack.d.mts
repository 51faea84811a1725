// Types for the tests that import scripts/check-pack.mjs.
export function promisedFiles(pkg: object): string[];
export function packProblems(files: readonly string[], pkg: { files: readonly string[] }): string[];
