import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeSkippedSuites, optionalSuites } from "../support/skipped-suites.ts";

describe("the skipped suites' notice (vitest globalSetup)", () => {
  it("names each suite that skips without its variable, with the variable", () => {
    const lines = describeSkippedSuites({});
    expect(lines).toContainEqual(
      expect.stringMatching(/^skipped: PostgreSQL .*PLATFORM_INTEGRATION_PG_URL/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^skipped: Redis .*PLATFORM_INTEGRATION_REDIS_URL/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^skipped: Samba AD DC: .*PLATFORM_INTEGRATION_AD_URL/),
    );
    const withPostgres = describeSkippedSuites({ PLATFORM_INTEGRATION_PG_URL: "postgres://x" });
    expect(withPostgres.join("\n")).not.toContain("PostgreSQL");
  });

  it("names every variable that a suite of the tests reads to enable itself", () => {
    const named = optionalSuites.map((suite) => suite.howToEnable).join(" ");
    for (const file of [
      "test/stores/postgres.test.ts",
      "examples/redis-store/redis-user-store.test.ts",
      "test/ldap/slapd.test.ts",
      "test/ldap/active-directory.test.ts",
      "test/ldap/389-ds.test.ts",
    ]) {
      const text = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
      const variable = /process\.env\.(PLATFORM_INTEGRATION_\w+_URL)/.exec(text)?.[1];
      expect(variable, file).toBeDefined();
      expect(named, file).toContain(variable);
    }
  });
});
