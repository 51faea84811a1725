import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { checkSnippets, snippets } from "../../scripts/check-readme-snippets.mjs";

// A built package in miniature: one entry's declarations, as tsup writes them.
const dist = mkdtempSync(join(tmpdir(), "readme-dist-"));
mkdirSync(join(dist, "provisioning"));
writeFileSync(
  join(dist, "provisioning", "index.d.ts"),
  `interface HandlerOptions { store: object; quarantine?: boolean }
declare function createProvisioningHandler(options: HandlerOptions): { stats(): { requests: number } };
declare class MemoryUserStore { constructor(options?: { unique?: string[] }) }
export { createProvisioningHandler, MemoryUserStore };
export type { HandlerOptions };
`,
);
afterAll(() => rmSync(dist, { recursive: true, force: true }));

const readme = (...blocks: string[]) =>
  ["# A package", "", ...blocks.map((code) => `Some words.\n\n\`\`\`ts\n${code}\`\`\`\n`)].join(
    "\n",
  );

describe("scripts/check-readme-snippets.mjs", () => {
  it("finds each ts block with the README line it starts on, and no other language's", () => {
    const text = "# x\n\n```ts\nconst a = 1;\n```\n\n```sh\nnpm test\n```\n\n```ts\nlet b;\n```\n";
    expect(snippets(text)).toEqual([
      { line: 4, code: "const a = 1;\n" },
      { line: 12, code: "let b;\n" },
    ]);
  });

  it("fails a renamed option, a wrong argument or a wrong result property, naming the README line", () => {
    const results = checkSnippets(
      readme(
        'import { createProvisioningHandler } from "platform-integration/provisioning";\n\ncreateProvisioningHandler({ store, quarantined: true });\n',
        "const handler = createProvisioningHandler({ store: new MemoryUserStore({ unique: 1 }) });\nhandler.stats().request;\n",
      ),
      dist,
    );
    expect(results.map((result) => result.problems)).toEqual([
      [expect.stringMatching(/^README\.md:8: TS2561: .*'quarantined' does not exist/)],
      [
        expect.stringMatching(/^README\.md:14: TS2322: /),
        expect.stringMatching(/^README\.md:15: TS2551: Property 'request' does not exist/),
      ],
    ]);
  });

  it("takes a fragment's undeclared names as its context, imports the SDK's, and checks a block of options", () => {
    const results = checkSnippets(
      readme(
        "createProvisioningHandler({ store, quarantine: true });\napp.get('/x', (_req, res) => res.json(1));\n",
        'it("works", () => expect(1).toBe(1));\n',
        "handler: createProvisioningHandler({ store: {}, quarantine: false }),\n",
      ),
      dist,
    );
    expect(results).toEqual([
      { line: 6, problems: [], context: ["app", "store"] },
      { line: 13, problems: [], context: [] },
      { line: 19, problems: [], context: [] },
    ]);
  });

  it("runs in check:package, after the build", () => {
    expect(pkg.scripts["check:package"]).toMatch(
      /^node scripts\/check-pack\.mjs && .*node scripts\/check-readme-snippets\.mjs/,
    );
  });
});
