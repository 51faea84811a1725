// The bin itself, spawned as a user runs it: the directory sync runs in a worker thread (its young
// generation capped), so its output, exit status and signals go through the main thread.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const flags = [
  "--import",
  "data:text/javascript,globalThis.__SDK_VERSION__='0.0.0-test'",
  "--disable-warning=ExperimentalWarning",
];
const startServer = serveForEachTest();
let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "bin-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function start(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, [...flags, bin, ...args], { stdio: "pipe", env });
  const output = { out: "", err: "" };
  child.stdout.on("data", (chunk) => {
    output.out += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output.err += chunk;
  });
  const exit = once(child, "exit").then(([code]) => code as number | null);
  return { child, output, exit };
}

/** A sync whose directory cannot be reached: each cycle stops at once, then it waits an hour. */
async function syncEveryHour(env?: NodeJS.ProcessEnv) {
  const app = createReferenceProvisioning();
  const { url } = await startServer((request) => app.fetch(request));
  const args = ["sync", url, "--ldap-url", "ldap://127.0.0.1:1", "--base-dn", "dc=example,dc=test"];
  return start([...args, "--state", join(folder, "state.sqlite"), "--interval", "1h"], env);
}

async function waitFor(check: () => boolean) {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("the bin runs the sync in a worker thread", () => {
  it("prints the whole help and exits 0", async () => {
    const run = start(["sync", "--help"]);
    expect(await run.exit).toBe(0);
    expect(run.output.out).toMatch(/^Usage: platform-integration sync /);
    expect(run.output.out).toMatch(/2 for a wrong command line\.\n$/);
  });

  it("passes a wrong command line's exit status 2 and its message through", async () => {
    const run = start(["sync", "http://127.0.0.1:1", "--base-dn", "dc=x"]);
    expect(await run.exit).toBe(2);
    expect(run.output.err).toContain("platform-integration sync: Missing --ldap-url");
  });

  it("relays SIGINT: the sync stops cleanly between cycles and exits with the last one's status", async () => {
    const run = await syncEveryHour();
    await waitFor(() => run.output.out.includes("The directory could not be read"));
    run.child.kill("SIGINT");
    // Status 1: the last cycle stopped on an error. Without the relay the worker would wait an hour.
    expect(await run.exit).toBe(1);
    expect(run.output.err).toBe("");
  });

  it("runs in-process when NODE_OPTIONS sizes the young generation itself, with the same result", async () => {
    const run = await syncEveryHour({ ...process.env, NODE_OPTIONS: "--max-semi-space-size=8" });
    await waitFor(() => run.output.out.includes("The directory could not be read"));
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(1);
  });
});
