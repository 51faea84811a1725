// The bin itself, spawned as a user runs it: for the directory sync it starts itself again in the
// same process with V8's young generation capped (process.execve), so its output, exit status and
// signals must survive the restart.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const flags = [
  "--import",
  "data:text/javascript,globalThis.__PACKAGE_VERSION__='0.0.0-test'",
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
  args.push("--state", join(folder, "state.sqlite"), "--interval", "1h");
  return { ...start(args, env), args };
}

async function waitFor(check: () => boolean) {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The process's command line as the kernel holds it now: after a restart, the new one's. */
function commandLineOf(pid: number | undefined): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
}

/**
 * A sync every hour, seen from outside once its first cycle has stopped: its command line and
 * environment then (Linux's /proc), and its exit status after a SIGINT.
 */
async function syncThenInterrupt(env?: NodeJS.ProcessEnv) {
  const run = await syncEveryHour(env);
  await waitFor(() => run.output.out.includes("The directory could not be read"));
  const commandLine = commandLineOf(run.child.pid);
  const environment = readFileSync(`/proc/${run.child.pid}/environ`, "utf8").split("\0");
  run.child.kill("SIGINT");
  return { ...run, commandLine, environment, status: await run.exit };
}

describe("the bin restarts itself for the sync, its young generation capped", () => {
  it.runIf(process.platform === "linux")(
    "runs the sync under the same pid and environment with its heap flags after the user's own",
    async () => {
      // The bind password comes from the environment: the restart must keep it.
      const run = await syncThenInterrupt({ ...process.env, LDAP_BIND_PASSWORD: "kept-across" });
      expect(run.status).toBe(1);
      expect(run.environment).toContain("LDAP_BIND_PASSWORD=kept-across");
      const heapFlags = [
        "--max-semi-space-size=8",
        "--heap-growing-percent=100",
        "--no-parallel-scavenge",
      ];
      expect(run.commandLine).toEqual([process.execPath, ...flags, ...heapFlags, bin, ...run.args]);
    },
  );

  it.runIf(process.platform === "linux")("does not restart for another command", async () => {
    // An application that never answers: the simulation waits at its ping until SIGINT.
    const { url } = await startServer(() => new Promise<Response>(() => {}));
    const run = start(["simulate", url, "--users", "1"]);
    await waitFor(() => run.output.out.includes("Simulating"));
    const commandLine = commandLineOf(run.child.pid);
    run.child.kill("SIGINT");
    await run.exit;
    expect(commandLine).toEqual([process.execPath, ...flags, bin, "simulate", url, "--users", "1"]);
  });

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

  it("takes SIGINT after the restart: the sync stops cleanly between cycles and exits with the last one's status", async () => {
    const run = await syncEveryHour();
    await waitFor(() => run.output.out.includes("The directory could not be read"));
    run.child.kill("SIGINT");
    // Status 1: the last cycle stopped on an error. Without a handler the signal would end it at
    // once (130); with the signal lost it would wait an hour.
    expect(await run.exit).toBe(1);
    expect(run.output.err).toBe("");
  });

  it.runIf(process.platform === "linux")(
    "keeps the user's choice when NODE_OPTIONS sizes the young generation: no restart, the same result",
    async () => {
      const run = await syncThenInterrupt({
        ...process.env,
        NODE_OPTIONS: "--max-semi-space-size=4",
      });
      expect(run.status).toBe(1);
      expect(run.commandLine).toEqual([process.execPath, ...flags, bin, ...run.args]);
    },
  );
});
