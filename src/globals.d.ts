/** Replaced at build time (tsup `define`) and in tests (vitest `define`) with package.json's version. */
declare const __PACKAGE_VERSION__: string;
