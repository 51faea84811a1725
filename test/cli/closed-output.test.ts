import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { createReferenceProvisioning } from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;
// The build defines __PACKAGE_VERSION__ (the clients' User-Agent); the sources run without a build.
const flags = [
  "--import",
  "data:text/javascript,globalThis.__PACKAGE_VERSION__='0.0.0-test'",
  // As npm run demo does: node:sqlite is experimental on Node 22 and 24.
  "--disable-warning=ExperimentalWarning",
];
const startServer = serveForEachTest();

/**
 * Runs the bin as `platform-integration ... | head -1` would: once the first line has arrived
 * (or at once, with `atOnce`), the reader goes away and every later write meets EPIPE.
 */
function pipedIntoHead(args: string[], { atOnce = false } = {}) {
  const child = spawn(process.execPath, [...flags, bin, ...args], {
    stdio: "pipe",
  }) as ChildProcessWithoutNullStreams;
  let err = "";
  child.stderr.on("data", (chunk) => {
    err += chunk;
  });
  const firstLine = new Promise<string>((resolve) => {
    if (atOnce) {
      child.stdout.destroy();
      resolve("");
      return;
    }
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!out.includes("\n")) return;
      child.stdout.destroy();
      resolve(out.slice(0, out.indexOf("\n")));
    });
  });
  const exit = once(child, "exit").then(([code]) => code as number | null);
  return { child, firstLine, exit, stderr: () => err };
}

async function reference() {
  const app = createReferenceProvisioning();
  return (await startServer((request) => app.fetch(request))).url;
}

describe("output into a closed pipe (| head -1) ends quietly with status 0", () => {
  it("conformance", async () => {
    const run = pipedIntoHead(["conformance", await reference()], { atOnce: true });
    expect(await run.exit).toBe(0);
    // Only the progress lines of the checks it ran: no error, no stack trace.
    expect(run.stderr()).toMatch(/^(\[ *\d+\/\d+\] \S+ +.+\n)*$/);
  });

  it("simulate, which stops its sync", async () => {
    const run = pipedIntoHead(["simulate", await reference(), "--users", "2000"]);
    expect(await run.firstLine).toMatch(/^Simulating the platform against /);
    expect(await run.exit).toBe(0);
    expect(run.stderr()).toBe("");
  });

  it("demo", async () => {
    const run = pipedIntoHead(["demo", "--users", "200"]);
    expect(await run.firstLine).toMatch(/^(platform-integration demo|initial sync)/);
    expect(await run.exit).toBe(0);
    expect(run.stderr()).toBe("");
  });

  it("mock-api, which keeps serving until stopped", async () => {
    const run = pipedIntoHead(["mock-api", "--port", "0"]);
    const url = /listening on (\S+)/.exec(await run.firstLine)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Each event is printed: the first print meets the closed pipe, and serving goes on.
    for (let event = 0; event < 3; event++) {
      const response = await fetch(`${url}/audit/v1/event`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ action: `user.login.${event}` }),
      });
      expect(response.status).toBe(201);
    }
    expect((await fetch(`${url}/version/v1/current`)).status).toBe(200);
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(0);
    expect(run.stderr()).toBe("");
  });
});
