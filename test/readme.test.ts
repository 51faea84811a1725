import { existsSync, readdirSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import pkg from "../package.json" with { type: "json" };

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The first TypeScript block of a piece of the README. */
const snippetAfter = (text: string) => /```ts\n([\s\S]*?)```/.exec(text)?.[1] ?? "";

describe("README", () => {
  it("shows the quick start exactly as examples/quick-start/server.ts, which tsc checks", () => {
    const quickStart = readFileSync(
      new URL("../examples/quick-start/server.ts", import.meta.url),
      "utf8",
    );
    expect(readme).toContain(`\`\`\`ts\n${quickStart}\`\`\``);
  });

  it("lists every subpath export in its table", () => {
    const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== "./package.json");
    for (const subpath of subpaths) {
      expect(readme).toMatch(
        new RegExp(`^\\| \`platform-integration/${subpath.slice(2)}\` +\\|`, "m"),
      );
    }
  });

  it("names the test command that .ci/run runs", () => {
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");
    expect(readme).toContain("npm ci && npm test");
    expect(ci).toMatch(/^npm ci$/m);
    expect(ci).toMatch(/^npm test$/m);
  });

  it("links only to files that the package ships, relatively, so that they resolve where it is installed", () => {
    // No repository is published: the package names none, and links stay inside it.
    expect(Object.keys(pkg)).not.toContain("repository");
    expect(Object.keys(pkg)).not.toContain("homepage");
    expect(Object.keys(pkg)).not.toContain("bugs");
    // A "files" entry: a folder with all below it, or a glob where `*` stays within a folder.
    const matches = (entry: string, path: string) =>
      path === entry ||
      path.startsWith(`${entry}/`) ||
      new RegExp(
        `^${entry
          .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
          .replace(/\*\*\//g, "\u0000")
          .replace(/\*/g, "[^/]*")
          .replaceAll("\u0000", "(?:.*/)?")}$`,
      ).test(path);
    // As npm reads "files": the last entry that matches decides, and "!" leaves a path out.
    const shipped = (path: string) =>
      pkg.files.reduce(
        (kept, entry) =>
          entry.startsWith("!")
            ? kept && !matches(entry.slice(1), path)
            : kept || matches(entry, path),
        false,
      );
    const documents = [
      "README.md",
      // docs/api is typedoc's output, built on demand and never shipped.
      ...readdirSync(new URL("../docs", import.meta.url))
        .filter((name) => name.endsWith(".md"))
        .map((name) => `docs/${name}`),
      ...readdirSync(new URL("../examples", import.meta.url)).map(
        (name) => `examples/${name}/README.md`,
      ),
      "bench/README.md",
    ].filter((path) => existsSync(new URL(`../${path}`, import.meta.url)));
    let count = 0;
    for (const document of documents) {
      expect(shipped(document), document).toBe(true);
      const text = readFileSync(new URL(`../${document}`, import.meta.url), "utf8");
      for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        expect(target, `${document}: ${target}`).not.toMatch(/github\.com\/platform-integration/);
        const resolved = posix.normalize(
          posix.join(posix.dirname(document), decodeURI(target.replace(/#.*$/, ""))),
        );
        expect(
          existsSync(new URL(`../${resolved}`, import.meta.url)),
          `${document}: ${target}`,
        ).toBe(true);
        expect(shipped(resolved), `${document}: ${target} is not in "files"`).toBe(true);
        count++;
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(readme).not.toMatch(/github\.com\/platform-integration/);
  });

  it("shows every call of the app client, with setInstanceTags' force", () => {
    const section = readme.slice(
      readme.indexOf("\n### The app client\n"),
      readme.indexOf("\n## Testing\n"),
    );
    const source = readFileSync(
      new URL("../src/clients/app/app-client.ts", import.meta.url),
      "utf8",
    );
    const client = source.slice(source.indexOf("export interface AppClient {"));
    const calls = [...client.slice(0, client.indexOf("\n}\n")).matchAll(/^ {2}(\w+)\(/gm)].map(
      ([, name]) => name,
    );
    expect(calls).toHaveLength(14);
    for (const call of calls) expect(section, call).toContain(`app.${call}(`);
    expect(section).toContain("{ force: true }");
  });

  it("shows the msw handlers' current option, the running version", () => {
    const section = readme.slice(readme.indexOf("\n### Testing with msw\n"));
    expect(snippetAfter(section)).toMatch(
      /^ {2}current: \{ version: "[^"]+", releaseSequence: \d+ \}/m,
    );
  });

  it("shows the conflict checks: conformance --conflicts, runConformance's conflicts, swapValues", () => {
    const section = readme.slice(readme.indexOf("\n#### Conflicts: a swap of unique values\n"));
    expect(section).toContain("conformance http://localhost:3000/ldap/auth --conflicts");
    expect(section).toContain("runConformance(handler, { conflicts: true })");
    expect(section).toContain('platform.swapValues("email", "a", "b")');
  });

  it("says which Node the SDK needs, as engines does", () => {
    expect(pkg.engines.node).toBe(">=22.13");
    expect(readme).toContain("The SDK needs Node 22.13 or later");
  });

  // Issue 40's fresh eyes, on the README of the integration branch.
  const section = (heading: string) => {
    const start = readme.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThan(-1);
    const next = readme.slice(start + heading.length + 2).search(/^#{2,4} /m);
    return readme.slice(start, next === -1 ? undefined : start + heading.length + 2 + next);
  };

  it("never shows a route that serves stored users with their passwords", () => {
    expect(readme).not.toMatch(/res\.json\(await store\.(list|get)\([^)]*\)\)/);
    expect(readme).toContain("(await store.list()).map(({ password, ...user }) => user)");
  });

  it("says which Node loads what below 22.13, not that nothing runs", () => {
    expect(readme).not.toContain("will not run");
    expect(section("## Install")).toMatch(
      /on Node 20 most subpaths load, but `platform-integration\/sqlite`/,
    );
  });

  it("names, in the table of the APIs' differences, each field the newer API's current version may lack", () => {
    const source = readFileSync(
      new URL("../src/clients/version/read-version.ts", import.meta.url),
      "utf8",
    );
    const sdk = source.slice(source.indexOf("export interface SdkCurrentVersion {"));
    const optional = [...sdk.slice(0, sdk.indexOf("\n}\n")).matchAll(/^ {2}(\w+)\?:/gm)]
      .map(([, name]) => name)
      .filter((name) => name !== "extra");
    expect(optional).toEqual(["releaseSequence", "releaseDate", "installDate"]);
    const row = readme.split("\n").find((line) => line.startsWith("| `version.current()`"));
    for (const name of optional) expect(row, name).toContain(`\`${name}\``);
    expect(row).toContain("`SdkCurrentVersion`");
  });

  it("shows every call of the platform simulator, the readUser template too", () => {
    const text = section("### Simulating the platform");
    const source = readFileSync(
      new URL("../src/testing/platform-simulator.ts", import.meta.url),
      "utf8",
    );
    const simulator = source.slice(source.indexOf("export interface PlatformSimulator {"));
    const members = [
      ...simulator.slice(0, simulator.indexOf("\n}\n")).matchAll(/^ {2}(?:readonly )?(\w+)[(:]/gm),
    ].map(([, name]) => name);
    expect(members).toContain("removeUser");
    for (const member of members) expect(text, member).toMatch(new RegExp(`\\b${member}\\b`));
    expect(text).toMatch(/`readUser` takes the same URL template/);
  });

  it("says which lines reach Fastify's request.log, and to give the handler app.log", () => {
    const text = section("### Logging");
    expect(text).toMatch(/request\.log[\s\S]*quarantine[\s\S]*conflict/);
    expect(text).toContain("createProvisioningHandler({ store, logger: app.log })");
  });

  it("ends every code block before a blank line, never inside a sentence", () => {
    const lines = readme.split("\n");
    let inside = false;
    for (const [index, line] of lines.entries()) {
      if (!line.startsWith("```")) continue;
      inside = !inside;
      if (!inside) expect(lines[index + 1] ?? "", `README.md:${index + 2}`).toBe("");
    }
  });
});
