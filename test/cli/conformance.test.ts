import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import type { ConformanceReport } from "../../src/testing/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();

/** The reference application over HTTP; with `missing404`, it answers 404 to a delete of a missing user. */
async function serve({ missing404 = false } = {}): Promise<string> {
  const app = createReferenceProvisioning();
  const server = await startServer(async (request) => {
    const uuid = /\/v1\/user\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1];
    if (
      missing404 &&
      request.method === "DELETE" &&
      uuid &&
      !app.store.get(decodeURIComponent(uuid))
    ) {
      return Response.json({ error: "no such user" }, { status: 404 });
    }
    return app.fetch(request);
  });
  return server.url;
}

describe("platform-integration conformance", () => {
  it("prints a table of passed checks and exits 0 for a correct implementation", async () => {
    const io = createFakeIo();
    expect(await run(["conformance", await serve()], io)).toBe(0);
    const lines = io.out.split("\n");
    expect(lines[0]).toMatch(/^CHECK +RESULT +EXPECTED +GOT$/);
    expect(lines[1]).toMatch(/^ping answers 204 +pass +ping: 204 +ping: 204$/);
    expect(io.out).toMatch(/\n(\d+) of \1 checks passed\.\n$/);
    expect(io.out).not.toContain("FAIL");
    expect(io.err).toBe("");
  });

  it("names the failed checks with what was expected and what came back, and exits 1", async () => {
    const io = createFakeIo();
    expect(await run(["conformance", await serve({ missing404: true })], io)).toBe(1);
    expect(io.out).toMatch(
      /^delete of a missing user answers 204 +FAIL +delete unknown uuid: 204 /m,
    );
    expect(io.out).toContain(
      "\nFAIL delete of a missing user answers 204 (spec 4.1 rule 4, 7 rule 2)\n" +
        "  expected: delete unknown uuid: 204\n" +
        '  got:      delete unknown uuid: 404 {"error":"no such user"}\n',
    );
    expect(io.out).toMatch(/\n\d+ of \d+ checks passed\.\n$/);
  });

  it("prints the report as JSON with --json", async () => {
    const io = createFakeIo();
    expect(await run(["conformance", "--json", await serve({ missing404: true })], io)).toBe(1);
    const report: ConformanceReport = JSON.parse(io.out);
    expect(report.passed).toBe(false);
    expect(report.results.filter((result) => !result.passed).map((result) => result.name)).toEqual([
      "delete of a missing user answers 204",
      "redelivered delete answers 204",
      "a full sync with changes completes",
    ]);
  });

  it("fits the table to a terminal's width and keeps failures whole below it", async () => {
    const io = createFakeIo({ tty: true, columns: 100 });
    await run(["conformance", await serve({ missing404: true })], io);
    const table = io.out.slice(0, io.out.indexOf("\n\n"));
    for (const line of table.split("\n")) expect([...line].length).toBeLessThanOrEqual(100);
    expect(table).toContain("…");
    expect(io.out).toContain('  got:      delete unknown uuid: 404 {"error":"no such user"}\n');
  });

  it("refuses a wrong command line with exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [[], /Missing <url>/],
      [["ftp://host"], /Not an http\(s\) URL: ftp:\/\/host/],
      [["http://a", "http://b"], /Unexpected argument: http:\/\/b/],
      [
        ["http://a", "--timeout", "soon"],
        /--timeout takes a whole number of at least 1, not "soon"/,
      ],
      [["http://a", "--verbose"], /Unknown option '--verbose'/],
    ];
    for (const [args, message] of cases) {
      const io = createFakeIo();
      expect(await run(["conformance", ...args], io)).toBe(2);
      expect(io.err).toMatch(message);
      expect(io.err).toContain('Run "platform-integration conformance --help"');
    }
  });
});
