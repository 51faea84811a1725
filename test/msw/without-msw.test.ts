// The built ./msw entry in an install without msw (an optional peer): both builds, ESM and
// CommonJS, must say which package to install, as ./sqlite and ./ldap do, rather than fail with
// the resolver's bare ERR_MODULE_NOT_FOUND. The entry is built from the sources with the
// package's own build settings into a temporary install, then imported by a child process.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, type Options } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { createIntegrationApiHandlers } from "../../src/msw/index.ts";
import { mswMissing } from "../../src/msw/msw-missing.ts";
import config from "../../tsup.config.ts";

const root = new URL("../../", import.meta.url).pathname;
const message =
  "platform-integration/msw needs msw, an optional peer dependency that is not installed: install it next to platform-integration (npm install --save-dev msw)";

let app: string;
beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), "msw-absent-"));
  const installed = join(app, "node_modules", "platform-integration");
  mkdirSync(installed, { recursive: true });
  writeFileSync(join(app, "package.json"), '{"name":"app","private":true}\n');
  writeFileSync(
    join(installed, "package.json"),
    JSON.stringify({ name: pkg.name, type: pkg.type, exports: { "./msw": pkg.exports["./msw"] } }),
  );
  // zod, the package's one run-time dependency, is installed; msw is not.
  symlinkSync(join(root, "node_modules", "zod"), join(app, "node_modules", "zod"), "dir");
  // Both of the package's builds, as `npm run build` makes them, for this one entry.
  for (const options of config as Options[]) {
    await build({
      ...options,
      entry: { "msw/index": join(root, "src/msw/index.ts") },
      outDir: join(installed, "dist"),
      dts: false,
      silent: true,
      config: false,
    });
  }
}, 120_000);
afterAll(() => rmSync(app, { recursive: true, force: true }));

/** What a child process in the app prints or throws, importing the entry one way. */
function load(code: string, type: "module" | "commonjs"): string {
  try {
    return execFileSync(process.execPath, [`--input-type=${type}`, "--eval", code], {
      cwd: app,
      encoding: "utf8",
      stdio: "pipe",
    });
  } catch (error) {
    return String((error as { stderr?: string }).stderr);
  }
}

describe("platform-integration/msw without msw installed", () => {
  // Catches: a static import of msw, which fails while linking with ERR_MODULE_NOT_FOUND.
  it("says what to install when imported as an ES module", () => {
    const out = load(
      'import("platform-integration/msw").then(() => console.log("loaded"), (error) => console.log(error.message))',
      "module",
    );
    expect(out.trim()).toBe(message);
  });

  // Catches: a CommonJS build that requires msw unguarded (Cannot find module 'msw').
  it("says what to install when required from CommonJS", () => {
    const out = load(
      'try { require("platform-integration/msw"); console.log("loaded") } catch (error) { console.log(error.message) }',
      "commonjs",
    );
    expect(out.trim()).toBe(message);
  });

  // The same builds load and work once msw is there: the guard names nothing else missing.
  it("loads and makes handlers, in both builds, once msw is installed", () => {
    symlinkSync(join(root, "node_modules", "msw"), join(app, "node_modules", "msw"), "dir");
    const routes = String(
      createIntegrationApiHandlers({ baseUrl: "https://platform.test" }).handlers.length,
    );
    const make =
      'createIntegrationApiHandlers({ baseUrl: "https://platform.test" }).handlers.length';
    expect(
      load(
        `const { createIntegrationApiHandlers } = await import("platform-integration/msw"); console.log(${make})`,
        "module",
      ).trim(),
    ).toBe(routes);
    expect(
      load(
        `const { createIntegrationApiHandlers } = require("platform-integration/msw"); console.log(${make})`,
        "commonjs",
      ).trim(),
    ).toBe(routes);
  });
});

describe("mswMissing", () => {
  // Catches: a guard that blames msw for any missing module, hiding what is really missing.
  it("tells only msw's own absence; a package missing under msw stays as it is", () => {
    const missing = (message: string, code = "ERR_MODULE_NOT_FOUND") =>
      Object.assign(new Error(message), { code });
    const own = missing("Cannot find package 'msw' imported from /app/dist/msw/index.js");
    expect((mswMissing(own) as Error).message).toBe(message);
    expect((mswMissing(own) as Error).cause).toBe(own);
    const required = missing("Cannot find module 'msw'\nRequire stack:", "MODULE_NOT_FOUND");
    expect((mswMissing(required) as Error).message).toBe(message);
    const under = missing("Cannot find package 'graphql' imported from /app/node_modules/msw/x.js");
    expect(mswMissing(under)).toBe(under);
    const other = new TypeError("'msw' is broken");
    expect(mswMissing(other)).toBe(other);
  });
});
