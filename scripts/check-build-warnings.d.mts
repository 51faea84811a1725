// Types for the tests that import scripts/check-build-warnings.mjs.
export function declarationWarnings(output: string): string[];
export function warningsProblem(output: string): string | undefined;
