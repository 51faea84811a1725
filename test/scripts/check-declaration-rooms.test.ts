import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const script = new URL("../../scripts/check-declaration-rooms.mjs", import.meta.url).pathname;

/** A dist folder holding `files`, and ./scim's declarations (empty, within their room). */
function distWith(files: Record<string, string>): string {
  const dist = mkdtempSync(join(tmpdir(), "dist-"));
  const scim = { "scim/index.d.ts": "export {};\n", "scim/index.d.cts": "export {};\n" };
  for (const [name, text] of Object.entries({ ...scim, ...files })) {
    mkdirSync(join(dist, name, ".."), { recursive: true });
    writeFileSync(join(dist, name), text);
  }
  return dist;
}

const check = (dist: string) => spawnSync(process.execPath, [script, dist], { encoding: "utf8" });

/** ./ldap's two declaration files, importing `shared` (ESM and CommonJS chunk names). */
const ldapImporting = (line: (extension: "js" | "cjs") => string) => ({
  "ldap/index.d.ts": `${line("js")}\nexport { DirectorySync };\n`,
  "ldap/index.d.cts": `${line("cjs")}\nexport { DirectorySync };\n`,
});

describe("scripts/check-declaration-rooms.mjs", () => {
  it("passes ./ldap declarations that reach shared chunks and ./provisioning only", () => {
    const run = check(
      distWith({
        ...ldapImporting((js) => `import { a as UserRecord } from '../user-record.${js}';`),
        "user-record.d.ts":
          "import { X } from './provisioning/index.js';\ninterface UserRecord {}\n",
        "user-record.d.cts": "interface UserRecord { mode: 'default' }\n",
        "provisioning/index.d.ts": "export {};\n",
        "testing/index.d.ts": "interface Fault {}\n",
      }),
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("fails when ./ldap's declarations import ./testing's, directly or through a chunk", () => {
    const run = check(
      distWith({
        ...ldapImporting((js) => `import { ProvisioningTarget } from '../testing/index.${js}';`),
        "testing/index.d.ts": "export {};\n",
        "testing/index.d.cts": "export {};\n",
      }),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("./ldap's declarations reach ./testing's: testing/index.d.ts");
    expect(run.stderr).toContain("testing/index.d.cts");

    const throughChunk = check(
      distWith({
        ...ldapImporting((js) => `import { a } from '../shared.${js}';`),
        "shared.d.ts": "import { Fake } from './msw/index.js';\n",
        "shared.d.cts": "export {};\n",
        "msw/index.d.ts": "export {};\n",
      }),
    );
    expect(throughChunk.status).toBe(1);
    expect(throughChunk.stderr).toContain("reach ./msw's: msw/index.d.ts");
  });

  it("fails when ./scim's declarations reach ./testing's", () => {
    const run = check(
      distWith({
        ...ldapImporting(() => ""),
        "scim/index.d.ts": "import { F } from '../testing/index.js';\n",
        "testing/index.d.ts": "export {};\n",
      }),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("./scim's declarations reach ./testing's: testing/index.d.ts");
  });

  it("fails when ./ldap's declarations name a fault, in its own file or a chunk it reaches", () => {
    const run = check(
      distWith({
        ...ldapImporting((js) => `import { a } from '../shared.${js}';\ninjectFault(): void;`),
        "shared.d.ts": "/** an injected fault */\n",
        "shared.d.cts": "export {};\n",
      }),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`name "injectFault" in ldap/index.d.ts`);
    expect(run.stderr).toContain(`name "fault" in shared.d.ts`);
  });

  it("fails when there is nothing built to check", () => {
    const run = check(distWith({}));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("ldap/index.d.ts is missing: run npm run build first");
  });
});
