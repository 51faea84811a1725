import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import { toWireUser } from "../../src/platform/wire-user.ts";
import {
  createProvisioningHandler,
  type Logger,
  MemoryUserStore,
} from "../../src/provisioning/index.ts";
import { SqliteUserStore } from "../../src/stores/sqlite/index.ts";
import type { ConformanceReport } from "../../src/testing/index.ts";
import { withReadUserRoute } from "../../src/testing/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();

/**
 * The reference application over HTTP, with a read route at /v1/user/:uuid; with `missing404`,
 * it answers 404 to a delete of a missing user; with `noisy`, that 404 has a multi-line body.
 */
async function serve({ missing404 = false, noisy = false } = {}) {
  const app = createReferenceProvisioning();
  const server = await startServer(async (request) => {
    const uuid = /\/v1\/user\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1];
    if (request.method === "GET" && uuid) {
      const user = await app.store.get(decodeURIComponent(uuid));
      return user ? Response.json(toWireUser(user)) : new Response(null, { status: 404 });
    }
    if (
      missing404 &&
      request.method === "DELETE" &&
      uuid &&
      !(await app.store.get(decodeURIComponent(uuid)))
    ) {
      return noisy
        ? new Response("<html>\n<body>\r\nNo such user\u001b[31m</body>\n</html>", { status: 404 })
        : Response.json({ error: "no such user" }, { status: 404 });
    }
    return app.fetch(request);
  });
  return { app, url: server.url, readUser: `${server.url}/v1/user/{uuid}` };
}

const lines = (text: string) => text.replace(/\n$/, "").split("\n");

/** An application with a unique email, with or without the handler's quarantine. */
async function serveUniqueEmails(quarantine: boolean) {
  const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
  const store = new MemoryUserStore({ unique: ["email"] });
  const handler = createProvisioningHandler({ store, quarantine, logger: quiet });
  const server = await startServer((request) => handler.fetch(request));
  return server.url;
}

const swap = "a swap of two users' emails does not stall the directory";

describe("platform-integration conformance --conflicts", () => {
  it("runs the swap check only when asked, and passes an application with the quarantine", async () => {
    const url = await serveUniqueEmails(true);
    const without = createFakeIo();
    expect(await run(["conformance", url], without)).toBe(0);
    expect(without.out).not.toContain(swap);
    const io = createFakeIo();
    expect(await run(["conformance", url, "--conflicts"], io)).toBe(0);
    expect(io.out).toMatch(new RegExp(`^pass .*${swap}$`, "m"));
    expect(lines(io.err).filter(Boolean)).toHaveLength(24);
  });

  it("fails an application whose unique email stalls the swap, and says it in --json too", async () => {
    const url = await serveUniqueEmails(false);
    const io = createFakeIo();
    expect(await run(["conformance", url, "--conflicts", "--json"], io)).toBe(1);
    const report = JSON.parse(io.out) as ConformanceReport;
    expect(report.results.find((result) => result.name === swap)?.passed).toBe(false);
  });

  it("documents the option in --help", async () => {
    const io = createFakeIo();
    await run(["conformance", "--help"], io);
    expect(io.out).toContain("--conflicts");
  });
});

describe("platform-integration conformance", () => {
  it("prints one line per check and exits 0 for a correct implementation", async () => {
    const { url } = await serve();
    const io = createFakeIo();
    expect(await run(["conformance", url], io)).toBe(0);
    const out = lines(io.out);
    expect(out[0]).toMatch(/^RESULT +EFFECTS +CHECK$/);
    expect(out[1]).toMatch(/^pass {17}ping answers 204$/);
    expect(out[2]).toMatch(/^pass +status only +create answers 201$/);
    const table = out.slice(0, out.indexOf(""));
    expect(table).toHaveLength(24);
    expect(io.out).toMatch(/\n(\d+) of \1 checks passed\.\n/);
    expect(io.out).toContain(
      "\nEffects were not verified: 19 checks looked at statuses only. Pass --read-user\nto read users back (see --help).\n",
    );
    expect(io.out).toMatch(/\nEvery user it created was deleted\.\n$/);
    expect(io.out).not.toContain("FAIL");
    // A progress line on stderr as each check ends; the table waits for the end, on stdout.
    const progress = lines(io.err).filter(Boolean);
    expect(progress).toHaveLength(23);
    expect(progress[0]).toBe("[ 1/23] pass  ping answers 204");
    expect(progress[22]).toMatch(/^\[23\/23\] pass {2}/);
  });

  it("with --read-user, verifies the effects and says nothing of status only", async () => {
    const { url, readUser } = await serve();
    const io = createFakeIo();
    expect(await run(["conformance", url, "--read-user", readUser], io)).toBe(0);
    expect(lines(io.out)[2]).toMatch(/^pass +verified +create answers 201$/);
    expect(io.out).not.toContain("status only");
    expect(io.out).not.toContain("not verified");
  });

  // Issue 37, finding 7: the documented set-up with a store that deactivates failed 10 checks
  // and said every user was deleted while their rows stayed.
  it("with --read-user over a store that deactivates, passes and says which rows it left", async () => {
    const folder = await mkdtemp(join(tmpdir(), "conformance-cli-"));
    const store = new SqliteUserStore(join(folder, "users.db"), { onDelete: "deactivate" });
    try {
      const handler = withReadUserRoute(createProvisioningHandler({ store }), store);
      const { url } = await startServer((request) => handler.fetch(request));
      const io = createFakeIo();
      expect(await run(["conformance", url, "--read-user", `${url}/v1/user/{uuid}`], io)).toBe(0);
      expect(io.out).toMatch(/\n23 of 23 checks passed\.\n/);
      const kept = await store.count({ includeDeactivated: true });
      expect(kept).toBeGreaterThan(0);
      expect(io.out.replace(/\n/g, " ")).toContain(
        `The application keeps ${kept} of the users it created deactivated: deleted as the platform sees it, but their rows stay`,
      );
      expect(io.out).toMatch(/\nEvery other user it created was deleted\.\n$/);
    } finally {
      store.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("names the failed checks with what was expected and what came back, and exits 1", async () => {
    const { url } = await serve({ missing404: true });
    const io = createFakeIo();
    expect(await run(["conformance", url], io)).toBe(1);
    expect(io.out).toMatch(/^FAIL {17}delete of a missing user answers 204$/m);
    expect(io.out).toContain(
      "\nFAIL delete of a missing user answers 204\n" +
        "  rule:     spec 4.1 rule 4, 7 rule 2\n" +
        "  expected: delete unknown uuid: 204\n" +
        '  got:      delete unknown uuid: 404 {"error":"no such user"}\n',
    );
    expect(io.out).toMatch(/\n\d+ of \d+ checks passed, 3 failed\.\n/);
  });

  it("prints the report as JSON with --json, status only and warnings included", async () => {
    const { url } = await serve({ missing404: true });
    const io = createFakeIo();
    expect(await run(["conformance", "--json", url], io)).toBe(1);
    const report: ConformanceReport = JSON.parse(io.out);
    expect(report.passed).toBe(false);
    expect(report.effectsVerified).toBe(false);
    expect(report.leftBehind).toEqual([]);
    expect(report.results.filter((result) => !result.passed).map((result) => result.name)).toEqual([
      "delete of a missing user answers 204",
      "redelivered delete answers 204",
      "a full sync with changes completes",
    ]);
    expect(report.results.find((result) => result.name.startsWith("partial"))?.effects).toBe(
      "status only",
    );
  });

  it("fits 80 columns, wrapping details, and keeps a server's newlines and escapes out", async () => {
    const { url } = await serve({ missing404: true, noisy: true });
    for (const io of [createFakeIo(), createFakeIo({ tty: true, columns: 200 })]) {
      await run(["conformance", url], io);
      for (const line of lines(io.out)) expect([...line].length).toBeLessThanOrEqual(80);
      expect(io.out).not.toContain("\u001b");
      expect(io.out).not.toContain("\r");
      expect(io.out).not.toContain("…");
      expect(io.out).toContain(
        "  got:      delete unknown uuid: 404 <html> <body> No such user\\u001b[31m</body>\n",
      );
    }
    const narrow = createFakeIo({ tty: true, columns: 60 });
    await run(["conformance", url], narrow);
    for (const line of lines(narrow.out)) expect([...line].length).toBeLessThanOrEqual(60);
    // A check's name wraps in its column, whole.
    expect(narrow.out).toMatch(
      /pass +status only +partial modify \(uuid and one field\)\n +keeps the/,
    );
  });

  it("stops at once with one line when nothing answers", async () => {
    const server = await startServer(async () => new Response(null));
    await server.close();
    const io = createFakeIo();
    expect(await run(["conformance", server.url], io)).toBe(1);
    expect(lines(io.out)).toEqual([
      expect.stringMatching(/^Stopped: Nothing answers there \(.*ECONNREFUSED.*\): check the host/),
    ]);
  });

  it("on Ctrl-C, stops after the check under way and deletes the users it created", async () => {
    const app = createReferenceProvisioning();
    let interrupt = async () => {};
    const server = await startServer(async (request) => {
      if (!request.url.endsWith("/v1/user/modify")) return app.fetch(request);
      // The first modify never gets an answer: the check is under way, with its user stored.
      await interrupt();
      return new Promise<Response>(() => {});
    });
    const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;
    const child = spawn(process.execPath, [bin, "conformance", server.url], { stdio: "pipe" });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    interrupt = async () => {
      interrupt = async () => {};
      expect(await app.store.list()).not.toEqual([]);
      child.kill("SIGINT");
    };
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL +status only +modify answers 204 and updates$/m);
    expect(out).toMatch(/checks passed, 1 failed \(interrupted\)\.\n/);
    expect(await app.store.list()).toEqual([]);
  });

  it("says in --help what it may leave behind and how test users look", async () => {
    const io = createFakeIo();
    await run(["conformance", "--help"], io);
    expect(io.out).toContain("--read-user <url>");
    expect(io.out).toContain("It may leave behind:");
    expect(io.out).toContain("conformance-");
    expect(io.out).toContain("example.invalid");
    for (const line of lines(io.out)) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("refuses a wrong command line with exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [[], /Missing <url>/],
      [["ftp://host"], /Not an http\(s\) URL: ftp:\/\/host/],
      [["http://a", "http://b"], /Unexpected argument: http:\/\/b/],
      [
        ["http://a", "--timeout", "soon"],
        /--timeout takes a time such as 500ms, 10s, 5m or 1h \(a bare number is milliseconds\), not "soon"/,
      ],
      [["http://a", "--verbose"], /unknown option --verbose\n/],
      [["http://a", "--read-user", "http://a/v1/user/"], /--read-user: .*needs \{uuid\}/],
      [["http://a", "--read-user", "a/{uuid}"], /--read-user: .*not an http\(s\) URL/],
    ];
    for (const [args, message] of cases) {
      const io = createFakeIo();
      expect(await run(["conformance", ...args], io)).toBe(2);
      expect(io.err).toMatch(message);
      expect(io.err).toContain('Run "platform-integration conformance --help"');
    }
  });
});
