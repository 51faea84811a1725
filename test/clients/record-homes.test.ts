// Issue 41, findings 2, 3, 6 and 7 for the client folders: each record lives in one folder with
// its reader, client and fake; the msw handlers and mock-api know no record; no module or
// function a reader gets lost in; one home and one meaning for the names the issue found.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { licenseValueSchema } from "../../src/clients/license/license-record.ts";
import { sdkLicenseFieldSchema } from "../../src/clients/license/sdk-license-schemas.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

const sources = readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
  .filter((name) => name.endsWith(".ts"))
  .map((name) => join("src", name));

const read = (file: string) => readFileSync(join(root, file), "utf8");

/** Each module `file` imports (relative imports only), as paths from the repository's root. */
function importsOf(file: string): string[] {
  return ts
    .preProcessFile(read(file), true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(root, resolve(root, dirname(file), specifier)));
}

/** A record module: the zod records and schemas a client decodes and its fake encodes with. */
const isRecordModule = (file: string) =>
  /^src\/clients\/[^/]+\/[^/]*-(record|schemas?)\.ts$/.test(file);

/** The client folders this issue gave their fakes (audit's record is another room's). */
const clientFolders = ["version", "license", "identity", "console", "app"];

describe("record homes (issue 41)", () => {
  it("imports a client's records only from its own folder; the newer API's shared ones from src/clients", () => {
    const strays = sources.flatMap((file) =>
      importsOf(file)
        .filter(isRecordModule)
        .filter((target) => {
          const [, , owner] = target.split("/");
          const [, , from] = file.split("/");
          if (owner === "sdk-api") return !file.startsWith("src/clients/");
          if (!clientFolders.includes(owner ?? "")) return false;
          return !file.startsWith("src/clients/") || from !== owner;
        })
        .map((target) => `${file} -> ${target}`),
    );
    expect(strays).toEqual([]);
  });

  it("builds the msw handlers and mock-api from the fakes: they name no record and no route", () => {
    const builtFromFakes = sources.filter((file) =>
      /^src\/(msw\/|cli\/commands\/mock-api)/.test(file),
    );
    expect(builtFromFakes.length).toBeGreaterThanOrEqual(4);
    for (const file of builtFromFakes) {
      expect(importsOf(file).filter(isRecordModule), file).toEqual([]);
      // A route of the platform's APIs, as msw or a hand-made mapping would spell it.
      expect(read(file), file).not.toMatch(
        /["'`]\/(version|audit|identity|status|license|console|api)\/v1\b/,
      );
    }
  });

  it("keeps each client's fake in its own folder, beside its records", () => {
    const fakes = sources.filter((file) => /^src\/testing\/fake-/.test(file));
    // What stays in the testing kit composes the client folders' fakes behind a router.
    expect(fakes.sort()).toEqual([
      "src/testing/fake-integration-api.ts",
      "src/testing/fake-sdk-api.ts",
      "src/testing/fake-sdk-router.ts",
    ]);
    for (const folder of clientFolders) {
      expect(sources, folder).toContain(`src/clients/${folder}/fake.ts`);
    }
  });

  it("gives licenseValueSchema one home, which the newer API's field reads its value with", () => {
    const homes = sources.filter((file) => /\bconst licenseValueSchema\b/.test(read(file)));
    expect(homes).toEqual(["src/clients/license/license-record.ts"]);
    const value = sdkLicenseFieldSchema.shape.value as unknown as {
      _zod: { def: { innerType: unknown } };
    };
    expect(value._zod.def.innerType).toBe(licenseValueSchema);
  });

  it("names files for what they hold, and this package's version apart from the service's", () => {
    // *-record.ts hold records, read-*.ts their readers; no *-records.ts holding either.
    expect(sources.filter((file) => file.endsWith("-records.ts"))).toEqual([]);
    // "sdk" is the platform's newer API: this package's version is packageVersion.
    expect(sources.filter((file) => /\bsdkVersion\b/.test(read(file)))).toEqual([]);
  });

  it("has no module over 450 non-blank lines and no function over 150 lines in the client folders, fakes, msw and mock-api", () => {
    const owned = sources.filter((file) =>
      /^src\/(clients\/(version|license|identity|console|app|sdk-api)\/|testing\/fake-|msw\/|cli\/commands\/mock-api)/.test(
        file,
      ),
    );
    const tooLong: string[] = [];
    for (const file of owned) {
      const text = read(file);
      const lines = text.split("\n").filter((line) => line.trim() !== "").length;
      if (lines > 450) tooLong.push(`${file}: ${lines} non-blank lines`);
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
          const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > 150) tooLong.push(`${file}:${start + 1}: ${end - start + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(tooLong).toEqual([]);
  });
});
