import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import type { ConformanceReport } from "../../src/testing/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { createScimFixture, type ScimDefects } from "../testing/scim-fixture.ts";

const startServer = serveForEachTest();
const token = "s3cret-token-for-tests";

async function serve(defects: ScimDefects = {}) {
  const fixture = createScimFixture({ token, basePath: "/scim/v2", defects });
  const server = await startServer(fixture.fetch);
  return `${server.url}/scim/v2`;
}

describe("platform-integration conformance --scim", () => {
  it("passes a correct SCIM service: a table, progress on stderr, exit 0", async () => {
    const url = await serve();
    const io = createFakeIo();
    expect(await run(["conformance", "--scim", url, "--token", token], io)).toBe(0);
    expect(io.out).toMatch(/^RESULT +EFFECTS +CHECK/);
    expect(io.out).toContain("23 of 23 checks passed.");
    expect(io.out).toContain("Every user it created was deleted.");
    expect(io.out).not.toContain("Effects were not verified");
    expect(io.err).toMatch(/^\[ 1\/23\] pass {2}Entra: test connection/);
    expect(io.out + io.err).not.toContain(token);
  });

  it("says what was expected and what came for a wrong service, exit 1", async () => {
    const url = await serve({ patchReactivates: true });
    const io = createFakeIo();
    expect(await run(["conformance", `--scim=${url}`, "--token", token], io)).toBe(1);
    expect(io.out).toMatch(/FAIL Entra: a PATCH of another attribute keeps a disabled user/);
    const flat = io.out.replace(/\s+/g, " ");
    expect(flat).toMatch(/expected: [^:]*: 201; .* get: active false got: /);
    expect(flat).toMatch(/got: create: 201; PATCH active false: 200; .* get: active true/);
  });

  it("reads the token from $SCIM_TOKEN, and prints JSON with --json", async () => {
    const url = await serve();
    const io = createFakeIo();
    io.env.SCIM_TOKEN = token;
    expect(await run(["conformance", "--scim", url, "--json"], io)).toBe(0);
    const report = JSON.parse(io.out) as ConformanceReport;
    expect(report).toMatchObject({ passed: true, effectsVerified: true, leftBehind: [] });
  });

  it("stops with one line for a refused token", async () => {
    const url = await serve();
    const io = createFakeIo();
    expect(await run(["conformance", "--scim", url, "--token", "wrong"], io)).toBe(1);
    expect(io.out).toMatch(/^Stopped: GET \/Users answered 401: the token was refused/);
  });

  it.each([
    [["--scim", "http://127.0.0.1:3000/scim/v2"], /Missing --token/],
    [["--scim", "ftp://host/scim", "--token", "t"], /Not an http\(s\) URL/],
    [["--scim", "http://h/scim", "--token", "t", "extra"], /Unexpected argument: extra/],
    [["--scim", "http://h/scim", "--token", "t", "--read-user", "x"], /unknown option --read-user/],
  ])("refuses a wrong command line %j with exit 2", async (args, message) => {
    const io = createFakeIo();
    expect(await run(["conformance", ...args], io)).toBe(2);
    expect(io.err).toMatch(message);
  });
});
