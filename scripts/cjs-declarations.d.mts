// Types for the tests that import scripts/cjs-declarations.mjs.
/** A `.d.ts` file's text as its `.d.cts` twin: every relative `.js` specifier made `.cjs`. */
export function toCommonJsDeclaration(text: string): string;
