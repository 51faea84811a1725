// Types for the tests that import scripts/check-sizes.mjs.
export const maxFunctionLines: number;
export const maxFileLines: number;
export function sourcesUnder(folder: string): string[];
export function measure(file: string): {
  nonBlank: number;
  functions: { name: string; line: number; lines: number }[];
};
export function overLimits(files: readonly string[]): string[];
