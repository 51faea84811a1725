import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const docs = readFileSync(new URL("../../docs/provisioning.md", import.meta.url), "utf8");

describe("docs/provisioning.md", () => {
  it("documents the release's whole identity block", () => {
    const block = docs.slice(docs.indexOf("## The release's `identity` block"));
    for (const key of [
      "enabled:",
      "provisioner:",
      "enable_reset_request:",
      "sources:",
      "source: ldap",
      "ldap_advanced",
      "filter:",
      "ldap_username_field",
      "sAMAccountName",
    ]) {
      expect(block).toContain(key);
    }
    expect(block).toMatch(/keep `basePath` empty/);
    expect(block).toMatch(/sends no passwords/);
  });

  it("says reset is off by default and how to turn it on", () => {
    expect(docs).toMatch(/\*\*off by default\*\*/);
    expect(docs).toContain("reset: true");
  });
});
