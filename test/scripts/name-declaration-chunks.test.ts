import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const script = new URL("../../scripts/name-declaration-chunks.mjs", import.meta.url).pathname;

function distWith(files: Record<string, string>): string {
  const dist = mkdtempSync(join(tmpdir(), "dist-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dist, name, ".."), { recursive: true });
    writeFileSync(join(dist, name), text);
  }
  return dist;
}

describe("scripts/name-declaration-chunks.mjs", () => {
  it("drops the hash from shared declaration chunks and from every import of them", () => {
    const dist = distWith({
      "user-record-C7RmSbNm.d.ts": "interface UserRecord {}\nexport { UserRecord as a };\n",
      "user-record-C7RmSbNm.d.cts": "interface UserRecord {}\nexport { UserRecord as a };\n",
      "user-store-BHwwh0OG.d.ts": "import { a as UserRecord } from './user-record-C7RmSbNm.js';\n",
      "provisioning/index.d.ts":
        "import { a as UserRecord } from '../user-record-C7RmSbNm.js';\nexport { UserRecord };\n",
      "provisioning/index.d.cts":
        "import { a as UserRecord } from '../user-record-C7RmSbNm.cjs';\nexport { UserRecord };\n",
      "chunk-3T2V2NPM.js": "export {};\n",
    });
    execFileSync(process.execPath, [script, dist]);

    expect(readdirSync(dist).sort()).toEqual([
      "chunk-3T2V2NPM.js",
      "provisioning",
      "user-record.d.cts",
      "user-record.d.ts",
      "user-store.d.ts",
    ]);
    expect(readFileSync(join(dist, "user-store.d.ts"), "utf8")).toContain(
      "from './user-record.js'",
    );
    expect(readFileSync(join(dist, "provisioning/index.d.ts"), "utf8")).toContain(
      "from '../user-record.js'",
    );
    expect(readFileSync(join(dist, "provisioning/index.d.cts"), "utf8")).toContain(
      "from '../user-record.cjs'",
    );
  });

  it("stops the build, naming both chunks, when two modules of the same name would collide", () => {
    const dist = distWith({
      "options-UIvbC3hu.d.ts": "export {};\n",
      "options-uWl8aMYP.d.ts": "export {};\n",
    });
    const run = spawnSync(process.execPath, [script, dist], { encoding: "utf8" });

    expect(run.status).toBe(1);
    expect(run.stderr).toContain("options-UIvbC3hu.d.ts");
    expect(run.stderr).toContain("options-uWl8aMYP.d.ts");
    expect(run.stderr).toContain("rename one of them");
    // Nothing is half renamed.
    expect(readdirSync(dist).sort()).toEqual(["options-UIvbC3hu.d.ts", "options-uWl8aMYP.d.ts"]);
  });
});
