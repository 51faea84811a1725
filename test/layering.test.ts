import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The forbidden imports of .dependency-cruiser.json, each a tiny file under
 * test/fixtures/layering/src/: at least one per rule (each row of docs/design.md's rooms table is
 * one "imports only" rule), and the pairs issue 41's review added one at a time and saw pass
 * (provisioning -> clients/version, stores/sqlite -> platform, adapters/koa -> clients/audit,
 * platform -> clients/version, clients/version -> provisioning/wire). A new rule adds a line here
 * and a fixture file.
 */
const violations: { rule: string; from: string; to: string }[] = [
  { rule: "no-circular", from: "src/cycle/a.ts", to: "src/cycle/b.ts" },
  {
    rule: "testing-kit-only-for-tests",
    from: "src/sync/imports-testing.ts",
    to: "src/testing/kit.ts",
  },
  {
    rule: "fakes-only-for-tests",
    from: "src/clients/license/imports-fake.ts",
    to: "src/clients/license/fake.ts",
  },
  {
    rule: "store-contract-only-for-the-testing-kit",
    from: "src/provisioning/imports-contract.ts",
    to: "src/users/contract/suite.ts",
  },
  {
    rule: "internal-imports-only-internal",
    from: "src/internal/imports-feature.ts",
    to: "src/provisioning/core.ts",
  },
  {
    rule: "users-imports-only-internal",
    from: "src/users/imports-provisioning.ts",
    to: "src/provisioning/core.ts",
  },
  {
    rule: "provisioning-imports-only-users-and-internal",
    from: "src/provisioning/imports-adapter.ts",
    to: "src/adapters/server.ts",
  },
  {
    rule: "provisioning-imports-only-users-and-internal",
    from: "src/provisioning/imports-client.ts",
    to: "src/clients/version/client.ts",
  },
  {
    rule: "provisioning-imports-only-users-and-internal",
    from: "src/provisioning/imports-scim.ts",
    to: "src/scim/handler.ts",
  },
  {
    rule: "scim-imports-only-users-the-http-edge-and-internal",
    from: "src/scim/imports-adapter.ts",
    to: "src/adapters/server.ts",
  },
  {
    rule: "adapters-import-only-the-core",
    from: "src/adapters/koa/imports-audit.ts",
    to: "src/clients/audit/buffer.ts",
  },
  {
    rule: "stores-import-only-users-and-internal",
    from: "src/stores/sqlite/imports-platform.ts",
    to: "src/platform/engine.ts",
  },
  {
    rule: "integration-api-imports-only-internal",
    from: "src/clients/integration-api/imports-sdk-api.ts",
    to: "src/clients/sdk-api/selection.ts",
  },
  {
    rule: "sdk-api-imports-only-integration-api-and-internal",
    from: "src/clients/sdk-api/imports-version.ts",
    to: "src/clients/version/client.ts",
  },
  {
    rule: "client-imports-only-its-layers",
    from: "src/clients/version/imports-license.ts",
    to: "src/clients/license/client.ts",
  },
  {
    rule: "client-imports-only-its-layers",
    from: "src/clients/version/imports-wire.ts",
    to: "src/provisioning/wire.ts",
  },
  {
    rule: "audit-pg-boss-imports-only-the-audit-event",
    from: "src/clients/audit-pg-boss/imports-audit-buffer.ts",
    to: "src/clients/audit/buffer.ts",
  },
  {
    rule: "platform-imports-only-the-core",
    from: "src/platform/imports-version.ts",
    to: "src/clients/version/client.ts",
  },
  {
    rule: "sync-imports-only-the-platform-side",
    from: "src/sync/imports-testing.ts",
    to: "src/testing/kit.ts",
  },
  {
    rule: "ldap-imports-only-the-sync-and-below",
    from: "src/ldap/imports-client.ts",
    to: "src/clients/license/client.ts",
  },
  { rule: "testing-kit-imports-no-cli", from: "src/testing/imports-cli.ts", to: "src/cli/main.ts" },
];

/** Every import of every TypeScript file under `folder`: the importing file and where it points. */
function importsUnder(folder: string): { file: string; specifier: string; target: string }[] {
  const files = readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => /\.tsx?$/.test(name) && !name.includes("node_modules"))
    .map((name) => join(root, folder, name));
  return files.flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, "utf8"), true, true)
      .importedFiles.map(({ fileName: specifier }) => ({
        file: relative(root, file),
        specifier,
        target: specifier.startsWith(".")
          ? relative(root, resolve(file, "..", specifier))
          : specifier,
      })),
  );
}

describe("layering", () => {
  it("ships no code from examples/: nothing in src/ imports it", () => {
    const imports = importsUnder("src");
    expect(imports.length).toBeGreaterThan(100);
    expect(imports.filter(({ target }) => target.startsWith("examples"))).toEqual([]);
  });

  it("keeps examples to the public API: they import platform-integration/*, never the sources", () => {
    const imports = importsUnder("examples");
    expect(imports.some(({ specifier }) => specifier.startsWith("platform-integration/"))).toBe(
      true,
    );
    const outside = imports.filter(
      ({ specifier, target }) => specifier.startsWith(".") && !target.startsWith("examples"),
    );
    expect(outside).toEqual([]);
  });
});

describe("the dependency rules of .dependency-cruiser.json (npm run check:cycles runs them on src/)", () => {
  it("each rule reports its forbidden import in the fixture tree, and nothing else", async () => {
    const config = JSON.parse(readFileSync(join(root, ".dependency-cruiser.json"), "utf8")) as {
      forbidden: IForbiddenRuleType[];
      options: { tsConfig?: unknown; [option: string]: unknown };
    };
    // The fixture imports by relative path only, so the project's tsconfig is not needed there.
    const { tsConfig: _projectOnly, ...options } = config.options;
    const { output } = await cruise(["src"], {
      ...options,
      baseDir: join(root, "test/fixtures/layering"),
      validate: true,
      ruleSet: { forbidden: config.forbidden },
    });
    const found = (output as ICruiseResult).summary.violations.map(({ rule, from, to }) => ({
      rule: rule.name,
      from,
      to,
    }));
    const byRule = (a: { rule: string; from: string }, b: { rule: string; from: string }) =>
      `${a.rule} ${a.from}`.localeCompare(`${b.rule} ${b.from}`);
    expect(found.sort(byRule)).toEqual([...violations].sort(byRule));
    expect(new Set(violations.map(({ rule }) => rule))).toEqual(
      new Set(config.forbidden.map(({ name }) => name)),
    );
  });
});
