import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: a plain script, without declarations
import { admits, foreignPackages } from "../../scripts/check-platform-packages.mjs";
// @ts-expect-error: a plain script, without declarations
import { completeLockfile, platformOf } from "../../scripts/complete-lockfile.mjs";

interface LockEntry {
  version: string;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}
const lockfile = JSON.parse(
  readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8"),
) as { packages: Record<string, LockEntry> };

describe("complete-lockfile.mjs", () => {
  it("states the os and cpu that npm recorded for every platform package of the lockfile", () => {
    const platformPackages = Object.entries(lockfile.packages).filter(
      ([, entry]) => entry.optional && (entry.os || entry.cpu) && !entry.os?.[0]?.startsWith("!"),
    );
    expect(platformPackages.length).toBeGreaterThan(40);
    for (const [path, entry] of platformPackages) {
      const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
      if (name === "fsevents") continue; // Named for its API, not a platform: npm install adds it.
      const inferred = platformOf(name);
      expect({ name, os: inferred?.os, cpu: inferred?.cpu }).toEqual({
        name,
        os: entry.os,
        cpu: entry.cpu,
      });
      // A C library is stated only when the name has one, and then it is npm's.
      if (inferred.libc && entry.libc) expect(inferred.libc).toEqual(entry.libc);
    }
  });

  it("adds the optional entries npm dropped with their os, cpu and libc", () => {
    const lock = {
      packages: {
        "": { version: "1.0.0" },
        "node_modules/@biomejs/biome": {
          version: "2.6.8",
          dev: true,
          optionalDependencies: {
            "@biomejs/cli-linux-x64": "2.6.8",
            "@biomejs/cli-linux-x64-musl": "2.6.8",
            "@biomejs/cli-win32-x64": "2.6.8",
          },
        },
        "node_modules/@biomejs/cli-linux-x64": { version: "2.6.8", dev: true, optional: true },
      },
    };
    expect(completeLockfile(lock)).toEqual([
      "node_modules/@biomejs/cli-linux-x64-musl",
      "node_modules/@biomejs/cli-win32-x64",
    ]);
    expect(lock.packages["node_modules/@biomejs/cli-linux-x64-musl" as never]).toEqual({
      version: "2.6.8",
      dev: true,
      optional: true,
      os: ["linux"],
      cpu: ["x64"],
      libc: ["musl"],
    });
    expect(lock.packages["node_modules/@biomejs/cli-win32-x64" as never]).toMatchObject({
      os: ["win32"],
      cpu: ["x64"],
    });
  });

  it("refuses an optional package whose name states no platform", () => {
    const lock = {
      packages: { "": { version: "1.0.0", optionalDependencies: { "pg-native": "3.0.0" } } },
    };
    expect(() => completeLockfile(lock)).toThrow(/pg-native@3\.0\.0 .* names no platform/);
  });
});

describe("check-platform-packages.mjs", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const install = (path: string, manifest: object) => {
    mkdirSync(join(root, path), { recursive: true });
    writeFileSync(join(root, path, "package.json"), JSON.stringify(manifest));
  };

  it("names every installed package whose os, cpu or libc excludes this machine, nested ones too", () => {
    root = mkdtempSync(join(tmpdir(), "platform-"));
    const here = { os: "linux", cpu: "x64", libc: "glibc" };
    install("plain", { name: "plain", version: "1.0.0" });
    install("@s/cli-linux-x64", {
      name: "@s/cli-linux-x64",
      version: "1",
      os: ["linux"],
      cpu: ["x64"],
      libc: ["glibc"],
    });
    install("@s/cli-linux-x64-musl", {
      name: "@s/cli-linux-x64-musl",
      version: "1",
      os: ["linux"],
      cpu: ["x64"],
      libc: ["musl"],
    });
    install("@s/cli-win32-x64", {
      name: "@s/cli-win32-x64",
      version: "1",
      os: ["win32"],
      cpu: ["x64"],
    });
    install("plain/node_modules/arm", { name: "arm", version: "1", cpu: ["arm64"] });
    install("not-windows", { name: "not-windows", version: "1", os: ["!win32"] });
    const names = foreignPackages(root, here).map((line: string) => line.split(" ")[0]);
    expect(names.sort()).toEqual(["@s/cli-linux-x64-musl@1", "@s/cli-win32-x64@1", "arm@1"]);
  });

  it("reads npm's lists: a negated entry excludes, an empty list admits all", () => {
    expect(admits(undefined, "linux")).toBe(true);
    expect(admits([], "linux")).toBe(true);
    expect(admits(["!win32"], "linux")).toBe(true);
    expect(admits(["!linux"], "linux")).toBe(false);
    expect(admits(["darwin", "linux"], "linux")).toBe(true);
    expect(admits(["darwin"], "linux")).toBe(false);
  });
});
