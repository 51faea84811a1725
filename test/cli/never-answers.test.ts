// The CLI against an application that accepts connections and never answers: each command ends
// with its report and exits, whatever the server does with its sockets. Run as a user runs it, as
// a child process; a generous kill timer fails a test whose process would not end by itself.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const bin = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const flags = ["--import", "data:text/javascript,globalThis.__PACKAGE_VERSION__='0.0.0-test'"];
/** Far above what any of these runs takes; reached only by a process that would not end. */
const killAfterMs = 60_000;

const servers: Array<{ close(): void }> = [];
const folders: string[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A TCP server on loopback that accepts every connection, reads, and never writes a byte. */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  });
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

/** An HTTP server that answers GET /v1/ping with 204 and holds every other request for ever. */
async function pingOnlyServer(): Promise<string> {
  const server: Server = createHttpServer((request, response) => {
    if (request.url === "/v1/ping") response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close() {
      server.closeAllConnections();
      server.close();
    },
  });
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

function start(args: string[]) {
  const child = spawn(process.execPath, [...flags, bin, ...args], { stdio: "pipe" });
  const output = { out: "", err: "" };
  child.stdout.on("data", (chunk) => {
    output.out += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output.err += chunk;
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, killAfterMs);
  const exit = once(child, "exit").then(([code]) => {
    clearTimeout(timer);
    return { code: code as number | null, killed };
  });
  return { child, output, exit };
}

describe("the CLI against an application that never answers", {
  timeout: killAfterMs + 10_000,
}, () => {
  it("conformance stops at the ping with one line and exits", async () => {
    const url = await silentServer();
    const run = start(["conformance", url, "--timeout", "300"]);
    expect(await run.exit).toEqual({ code: 1, killed: false });
    expect(run.output.out).toMatch(/^Stopped: No answer from .*within 300 ms/);
    expect(run.output.err).toMatch(/^\[ 1\/\d+\] FAIL {2}ping answers 204\n$/);
  });

  it("conformance stops at the first check that hangs, names the user it left, and exits", async () => {
    const url = await pingOnlyServer();
    const run = start(["conformance", url, "--timeout", "2s"]);
    expect(await run.exit).toEqual({ code: 1, killed: false });
    // A progress line per check as it ends, then one line for the stop: not a wait per check.
    expect(run.output.err.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^\[ 1\/\d+\] pass {2}ping answers 204$/),
      expect.stringMatching(/^\[ 2\/\d+\] FAIL {2}create answers 201$/),
    ]);
    expect(run.output.out).toMatch(
      /^Stopped: No answer within 2000 ms \(check "create answers 201"\)/,
    );
    // The clean-up's delete timed out too: it gave up at once and names the user.
    expect(run.output.out).toMatch(
      /Could not delete 1 users it created; delete them by hand:\n {2}conformance-[0-9a-f-]+ \(delete: no answer within\s+2000\s+ms\)/,
    );
  });

  it("conformance exits promptly on Ctrl-C during a call that would wait ten minutes", async () => {
    const url = await pingOnlyServer();
    const run = start(["conformance", url, "--timeout", "600000"]);
    while (!run.output.err.includes("[ 1/"))
      await new Promise((resolve) => setTimeout(resolve, 20));
    run.child.kill("SIGINT");
    expect(await run.exit).toEqual({ code: 1, killed: false });
    expect(run.output.err).toContain("Interrupted: deleting the users of the check under way");
    expect(run.output.out).toMatch(/\(interrupted\)\./);
    expect(run.output.out).toMatch(
      /conformance-[0-9a-f-]+ \(delete: no answer within\s+5000\s+ms\)/,
    );
  });

  it("simulate stops at the ping and exits", async () => {
    const url = await silentServer();
    const run = start(["simulate", url, "--users", "3", "--timeout", "300"]);
    expect(await run.exit).toEqual({ code: 1, killed: false });
    expect(run.output.out).toContain("Sync stopped at ping (attempt 1): no answer within 300 ms");
  });

  it("doctor reports the silent API and exits", async () => {
    const url = await silentServer();
    const run = start(["doctor", "--base-url", url, "--timeout", "300"]);
    expect(await run.exit).toEqual({ code: 1, killed: false });
    expect(run.output.out).toMatch(/the API does not answer/);
  });

  it("sync --once reports the silent application and exits", async () => {
    const url = await silentServer();
    const folder = mkdtempSync(join(tmpdir(), "never-answers-"));
    folders.push(folder);
    const run = start([
      "sync",
      url,
      ...["--ldap-url", url.replace("http:", "ldap:"), "--base-dn", "dc=example,dc=test"],
      ...["--once", "--timeout", "300", "--state", join(folder, "state.sqlite")],
    ]);
    expect(await run.exit).toEqual({ code: 1, killed: false });
    expect(run.output.out).toContain("no answer within 300 ms");
    // node:sqlite keeps the sync's state: the CLI drops Node's ExperimentalWarning about it.
    expect(run.output.err).not.toContain("ExperimentalWarning");
    // It stopped before anything was delivered: no state file is left behind.
    expect(readdirSync(folder)).toEqual([]);
  });
});
