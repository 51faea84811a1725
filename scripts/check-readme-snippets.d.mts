// Types for the tests that import scripts/check-readme-snippets.mjs.
export function snippets(markdown: string): { line: number; code: string }[];
export function checkSnippets(
  markdown: string,
  dist: string,
): { line: number; problems: string[]; context: string[] }[];
