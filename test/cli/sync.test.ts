// The sync command's command line and its failures without a directory; the runs against a real
// slapd are in test/ldap/slapd.test.ts.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/commands/sync-options.ts";
import { describeReport } from "../../src/cli/commands/sync-report.ts";
import { run } from "../../src/cli/run.ts";
import type { DirectorySyncReport } from "../../src/sync/directory-sync-types.ts";
import { createFakeIo } from "../support/fake-io.ts";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveSelfSignedForEachTest } from "../support/self-signed-server.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();
const startSelfSigned = serveSelfSignedForEachTest();
let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "sync-cli-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const required = ["--ldap-url", "ldap://127.0.0.1:1", "--base-dn", "dc=example,dc=test"];

describe("platform-integration sync", () => {
  it.each([
    [["sync", "http://127.0.0.1:1", "--base-dn", "dc=x"], /Missing --ldap-url/],
    [["sync", "http://127.0.0.1:1", "--ldap-url", "ldap://h"], /Missing --base-dn/],
    [["sync", "http://127.0.0.1:1", "--ldap-url", "http://h", "--base-dn", "dc=x"], /ldap:\/\//],
    [["sync", ...required], /Missing <url>/],
    [["sync", "http://127.0.0.1:1", ...required, "--once", "--interval", "5m"], /exclude/],
    [["sync", "http://127.0.0.1:1", ...required, "--interval", "soon"], /--interval takes/],
    [["sync", "http://127.0.0.1:1", ...required, "--page-size", "0"], /--page-size takes/],
    [["sync", "http://127.0.0.1:1", ...required, "--read-user", "http://app/u"], /\{uuid\}/],
    [["sync", "http://127.0.0.1:1", ...required, "--max-deletes", "many"], /--max-deletes/],
    [
      ["sync", "http://127.0.0.1:1", ...required, "--max-delete-percent", "101"],
      /--max-delete-percent/,
    ],
    [["sync", "http://127.0.0.1:1", ...required, "--allow-deletes", "-1"], /--allow-deletes/],
    [
      ["sync", "http://127.0.0.1:1", ...required, "--delete-window", "ever"],
      /--delete-window takes/,
    ],
    // Catches: a bare number read as seconds (24 meaning 24 s, not the 24 h meant).
    [
      ["sync", "http://127.0.0.1:1", ...required, "--delete-window", "24"],
      /--delete-window takes a time with its unit, such as 24h or 90m/,
    ],
    [
      ["sync", "http://127.0.0.1:1", "--ldap-url", "ldaps://h", "--base-dn", "dc=x", "--start-tls"],
      /startTls upgrades an ldap:\/\/ connection/,
    ],
    // The password never goes on the command line, where `ps` shows it to every user.
    [
      ["sync", "http://127.0.0.1:1", ...required, "--bind-password", "secret"],
      /unknown option --bind-password/,
    ],
  ])("refuses %j with exit 2", async (argv, message) => {
    const io = createFakeIo();
    expect(await run(argv, io)).toBe(2);
    expect(io.err).toMatch(message);
  });

  // Catches: a --read-user template with credentials accepted, then fetch's refusal, which
  // repeats them, printed once per user.
  it("refuses a --read-user template with credentials at once, once, without them", async () => {
    const io = createFakeIo();
    const argv = ["sync", "http://127.0.0.1:1", ...required, "--read-user"];
    expect(await run([...argv, "http://svc:S3cret@127.0.0.1:1/u/{uuid}"], io)).toBe(2);
    expect(io.err).toMatch(
      /--read-user: The read-user URL must not contain a user name or password \(fetch refuses it\): http:\/\/127\.0\.0\.1:1\/u\/\{uuid\}\. Serve the read route without them/,
    );
    expect(io.err.match(/must not contain/g)).toHaveLength(1);
    expect(io.err).not.toMatch(/svc|S3cret/);
  });

  // Catches: the help of before the refusals ("anything but 201 or 204 stops the cycle").
  it("says in its help what the sync does with each answer today, and how the guard is released", async () => {
    const io = createFakeIo();
    expect(await run(["sync", "--help"], io)).toBe(0);
    expect(io.out).not.toMatch(/anything but 201/);
    expect(io.out).toMatch(
      /201 to a create, 204 to a modify, delete, ping or reset\s+Acknowledged/,
    );
    expect(io.out).toMatch(
      /4xx to a user's create, modify or delete[\s\S]*held for the next cycle/,
    );
    expect(io.out).toMatch(/5xx, 401, 403, 405, 407, 408, 429[\s\S]*Stops the cycle/);
    expect(io.out).toMatch(/--allow-deletes <n>[\s\S]*spends it/);
    expect(io.out).toMatch(/--allow-delete-all/);
    expect(io.out).toMatch(/--delete-window <time>/);
  });

  it("refuses a --target-ca file that holds no PEM certificate, with exit 2", async () => {
    const file = join(folder, "not-a-ca.txt");
    writeFileSync(file, "hello");
    const io = createFakeIo();
    const argv = ["sync", "https://127.0.0.1:1", ...required, "--target-ca", file];
    expect(await run(argv, io)).toBe(2);
    expect(io.err).toContain(`--target-ca ${file} must be PEM certificate text`);
  });

  it("stops an interval sync at once, exit 1, when the application's certificate is not trusted", async () => {
    const { url } = await startSelfSigned();
    const io = createFakeIo();
    const state = join(folder, "state.sqlite");
    // Without the stop, an hourly sync would not return within the test's time.
    expect(await run(["sync", url, ...required, "--state", state, "--interval", "1h"], io)).toBe(1);
    expect(io.err).toMatch(
      /^platform-integration sync: The Provisioning API at https:\/\/127\.0\.0\.1:\d+: .*pass its CA certificate \(targetTls\.ca, sync --target-ca FILE\)\n$/,
    );
  });

  it("reads the bind password file, and says so when it cannot", async () => {
    const io = createFakeIo();
    const argv = ["sync", "http://127.0.0.1:1", ...required, "--bind-password-file", "/nope"];
    expect(await run(argv, io)).toBe(2);
    expect(io.err).toContain("--bind-password-file: cannot read /nope (ENOENT)");
  });

  it("reports an unreachable directory and exits 1 after one cycle with --once", async () => {
    const app = createReferenceProvisioning();
    const server = await startServer((request) => app.fetch(request));
    const io = createFakeIo();
    const state = join(folder, "state.sqlite");
    expect(await run(["sync", server.url, ...required, "--state", state, "--once"], io)).toBe(1);
    expect(io.out).toContain("initial sync stopped");
    expect(io.out).toContain("0 created, 0 modified, 0 deleted, 0 unchanged, 1 failed");
    expect(io.out).toMatch(
      /The directory could not be read: LDAP ldap:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
    );
    // Catches: a state file created on start and left behind by a run that stored nothing.
    expect(readdirSync(folder)).toEqual([]);
  });

  it("leaves no state file behind when it stops at the application's ping", async () => {
    const server = await startServer(() => Promise.resolve(new Response(null, { status: 503 })));
    const io = createFakeIo();
    const state = join(folder, "state.sqlite");
    expect(await run(["sync", server.url, ...required, "--state", state, "--once"], io)).toBe(1);
    expect(readdirSync(folder)).toEqual([]);
  });

  it("leaves no state file behind when the command line is refused", async () => {
    const io = createFakeIo();
    const argv = ["sync", "http://127.0.0.1:1", "--ldap-url", "ldaps://h", "--base-dn", "dc=x"];
    const state = join(folder, "state.sqlite");
    expect(await run([...argv, "--start-tls", "--state", state], io)).toBe(2);
    expect(readdirSync(folder)).toEqual([]);
  });

  // Catches: a cleanup that removes whatever file is at --state, a previous run's acknowledgements.
  it("keeps a state file that was there before a run that fails", async () => {
    const state = join(folder, "state.sqlite");
    writeFileSync(state, "");
    const io = createFakeIo();
    expect(
      await run(["sync", "http://127.0.0.1:1", ...required, "--state", state, "--once"], io),
    ).toBe(1);
    expect(existsSync(state)).toBe(true);
  });

  it("prints one JSON report per cycle with --json", async () => {
    const app = createReferenceProvisioning();
    const server = await startServer(() => Promise.resolve(new Response(null, { status: 503 })));
    const io = createFakeIo();
    const state = join(folder, "state.sqlite");
    const argv = ["sync", server.url, ...required, "--state", state, "--once", "--json"];
    expect(await run(argv, io)).toBe(1);
    expect(JSON.parse(io.out)).toMatchObject({
      completed: false,
      stoppedAt: { message: { kind: "ping" }, status: 503 },
    });
    expect(app.received).toEqual([]);
  });
});

describe("the printed report", () => {
  const report = (fields: Partial<DirectorySyncReport>): DirectorySyncReport => ({
    completed: true,
    mode: "full",
    read: "full",
    created: 0,
    modified: 0,
    deleted: 0,
    unchanged: 0,
    skipped: 0,
    skippedEntries: [],
    refused: 0,
    refusals: [],
    failed: 0,
    durationMs: 0,
    ...fields,
  });
  const io = { signal: new AbortController().signal };

  // Catches: "(no uuid)" printed for every skip, whatever its reason.
  it("prints each skipped entry with its own reason, and says when a full read skipped them all", () => {
    const skippedEntries = [
      { dn: "cn=a,dc=x", reason: "it has no username" },
      { dn: "cn=b,dc=x", reason: "it has no uuid attribute" },
    ];
    const all = describeReport(report({ skipped: 2, skippedEntries }), undefined, io);
    expect(all).not.toMatch(/no uuid\)/);
    expect(all).toMatch(
      /2 entries skipped, such as:\n {2}cn=a,dc=x: it has no username\n {2}cn=b,dc=x: it has no uuid attribute/,
    );
    expect(all).toMatch(
      /Every entry the directory returned was skipped: check the mapping \(--username-field/,
    );
    const some = describeReport(report({ skipped: 2, skippedEntries, created: 1 }), undefined, io);
    expect(some).not.toMatch(/Every entry/);
  });
});

describe("parseDuration", () => {
  it.each([
    ["60s", 60_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["500ms", 500],
    ["90", 90_000],
    ["1.5s", 1500],
  ])("reads %s as %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "0s", "-1s", "1d", "soon"])("refuses %j", (text) => {
    expect(() => parseDuration(text)).toThrow(/--interval takes/);
  });
});
