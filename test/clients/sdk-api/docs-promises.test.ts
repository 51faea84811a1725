import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
const readme = read("README.md");

// Issue 39: the docs promised more than the service and a signature give. These pin what they
// now say, so that an edit cannot quietly bring the old promises back.
describe("the docs promise exactly what the service and a signature give", () => {
  it("finding 6: what a signature proves, and what it does not, with a binding example", () => {
    const verifier = read("src/clients/license/verify-license-field.ts");
    expect(verifier).not.toContain("cannot be changed in the cluster");
    expect(verifier).toContain('What a `"valid"` proves, exactly');
    const section = readme.slice(readme.indexOf("\n### What a signature proves\n"));
    expect(section.length).toBeLessThan(readme.length);
    for (const fact of [
      "not the field's\nname, not its type, not the license or the customer",
      "`<nil>` signature of any empty field put onto `expires_at`",
      'license.field("seat_count")',
      'field.type !== "Integer"',
    ]) {
      expect(section).toContain(fact);
    }
  });

  it("finding 8: replayed, as the service keys its replay cache", () => {
    const answers = read("src/clients/sdk-api/sdk-answers.ts");
    expect(answers).not.toContain("The\n   * write stands");
    expect(answers).toContain("The cache keys on the method");
    expect(answers).toContain(
      "a second POST `{a}` within the minute is replayed and the metrics stay `{a, b}`",
    );
  });

  it("finding 3 (clients): read-only mode refuses some writes and takes others without storing them", () => {
    const app = read("src/clients/app/app-client.ts");
    const setMetrics = app.slice(
      app.indexOf("Replaces the custom metrics"),
      app.indexOf("setCustomMetrics(data"),
    );
    expect(setMetrics).not.toContain("@throws ReadOnlyModeError");
    expect(setMetrics).toContain("takes the call\n   * without a 422: it stores nothing");
    for (const write of [
      "deleteCustomMetric(key",
      "setInstanceTags(tags",
      "setSupportBundleMetadata(\n",
    ]) {
      const before = app.slice(0, app.indexOf(write));
      expect(before.slice(before.lastIndexOf("/**")), write).toContain("@throws ReadOnlyModeError");
    }
  });
});
