import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toCommonJsDeclaration } from "../../scripts/cjs-declarations.mjs";
import config from "../../tsup.config.ts";

const script = new URL("../../scripts/cjs-declarations.mjs", import.meta.url).pathname;

describe("scripts/cjs-declarations.mjs", () => {
  it("names the .cjs twin of every relative import: from, bare and import() types", () => {
    const text = [
      "import { a as UserRecord } from '../user-record.js';",
      "import '../logger.js';",
      'export { b } from "./chunk.js";',
      "type T = import('../user-store.js').UserStore;",
      "import { z } from 'zod/mini';",
      "import type { Server } from 'node:http';",
      "// a word ending in .js' stays: 'not/relative.js'",
    ].join("\n");
    expect(toCommonJsDeclaration(text)).toBe(
      [
        "import { a as UserRecord } from '../user-record.cjs';",
        "import '../logger.cjs';",
        'export { b } from "./chunk.cjs";',
        "type T = import('../user-store.cjs').UserStore;",
        "import { z } from 'zod/mini';",
        "import type { Server } from 'node:http';",
        "// a word ending in .js' stays: 'not/relative.js'",
      ].join("\n"),
    );
  });

  it("writes a .d.cts beside each .d.ts of dist/, in the entries' folders too", () => {
    const dist = mkdtempSync(join(tmpdir(), "dist-"));
    mkdirSync(join(dist, "ldap"));
    writeFileSync(
      join(dist, "user-record.d.ts"),
      "interface UserRecord {}\nexport { UserRecord as a };\n",
    );
    writeFileSync(join(dist, "ldap/index.d.ts"), "export { a } from '../user-record.js';\n");
    writeFileSync(join(dist, "ldap/index.js"), "export {};\n");
    execFileSync(process.execPath, [script, dist]);
    expect(readdirSync(dist).sort()).toEqual(["ldap", "user-record.d.cts", "user-record.d.ts"]);
    expect(readdirSync(join(dist, "ldap")).sort()).toEqual([
      "index.d.cts",
      "index.d.ts",
      "index.js",
    ]);
    expect(readFileSync(join(dist, "ldap/index.d.cts"), "utf8")).toBe(
      "export { a } from '../user-record.cjs';\n",
    );
  });

  it("runs in the build, after the chunks are named, for a CommonJS build that writes none", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(pkg.scripts.build).toMatch(
      /name-declaration-chunks\.mjs && node scripts\/cjs-declarations\.mjs$/,
    );
    const builds = config as Array<{ format: string[]; dts?: unknown }>;
    expect(
      builds.filter((build) => build.format.includes("cjs")).map((build) => build.dts),
    ).toEqual([undefined]);
  });
});
