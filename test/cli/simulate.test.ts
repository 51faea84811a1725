import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.ts";
import { toWireUser } from "../../src/platform/wire-user.ts";
import { createUserGenerator } from "../../src/testing/index.ts";
import { createFakeIo } from "../support/fake-io.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";

const startServer = serveForEachTest();

async function serve(
  wrong?: (request: Request) => Promise<Response | undefined>,
): Promise<{ app: ReferenceProvisioning; url: string }> {
  const app = createReferenceProvisioning();
  const server = await startServer(
    async (request) => (await wrong?.(request.clone())) ?? app.fetch(request),
  );
  return { app, url: server.url };
}

describe("platform-integration simulate", () => {
  it("syncs the generated users, then a round of changes, and reports throughput", async () => {
    const { app, url } = await serve();
    const io = createFakeIo();
    expect(
      await run(["simulate", url, "--users", "40", "--changes", "10", "--seed", "9"], io),
    ).toBe(0);
    expect(io.out).toContain(`Simulating the platform against ${url}: 40 users, seed 9\n`);
    expect(io.out).toMatch(/\nInitial sync: 40 of 40 messages in \d+\.\d\d s, \d+ users\/s\n/);
    expect(io.out).toMatch(/\nChanges: \d+ modified, \d+ deleted, \d+ added\n/);
    expect(io.out).toMatch(/\nChanges: 10 of 10 messages in \d+\.\d\d s, \d+ changes\/s\n/);
    expect(io.out).toMatch(/\nMESSAGE +DELIVERED +MEAN +SLOWEST\nping +2 +/);
    expect(io.out).toMatch(/\nSync completed: the application acknowledged all 50 messages\.\n/);
    expect(io.out).toMatch(/\nWhat the application stored was not verified: see --read-user\.\n$/);
    for (const user of await app.store.list()) {
      expect(user.uuid).toMatch(/^simulate-/);
      expect(user.username).toMatch(/^simulate-/);
      expect(user.email).toMatch(/@([a-z]+\.)?example\.invalid$/);
    }
  });

  it("with --read-user, verifies every user field by field after the sync", async () => {
    const { app, url } = await serve(async (request) => {
      const uuid = /\/v1\/user\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1];
      if (request.method !== "GET" || uuid === undefined) return undefined;
      const user = await app.store.get(decodeURIComponent(uuid));
      return user ? Response.json(toWireUser(user)) : new Response(null, { status: 404 });
    });
    const io = createFakeIo();
    const args = ["simulate", url, "--users", "30", "--changes", "10", "--seed", "2"];
    expect(await run([...args, "--read-user", `${url}/v1/user/{uuid}`], io)).toBe(0);
    expect(io.out).toMatch(
      /\nVerified: all \d+ users read back match the directory, field by field\.\n$/,
    );
    expect(io.out).not.toContain("not verified");
  });

  it("with --read-user, exits 1 and names each difference when what was stored is wrong", async () => {
    // A modify that replaces the record: every answer is right, the stored users are not.
    let app: ReferenceProvisioning | undefined;
    const served = await serve(async (request) => {
      const path = new URL(request.url).pathname;
      const uuid = /\/v1\/user\/([^/]+)$/.exec(path)?.[1];
      if (request.method === "GET" && uuid !== undefined) {
        const user = await app?.store.get(decodeURIComponent(uuid));
        return user ? Response.json(toWireUser(user)) : new Response(null, { status: 404 });
      }
      if (path.endsWith("/modify"))
        await app?.store.delete(((await request.json()) as { uuid: string }).uuid);
      return undefined;
    });
    app = served.app;
    const io = createFakeIo();
    const args = ["simulate", served.url, "--users", "30", "--changes", "30", "--seed", "2"];
    expect(await run([...args, "--read-user", `${served.url}/v1/user/{uuid}`], io)).toBe(1);
    expect(io.out).toMatch(/\nVerification failed: \d+ differences in the \d+ users read back:\n/);
    expect(io.out).toMatch(/\n {2}simulate-[0-9a-f-]+: user_id: expected "\d+", found\s+absent\n/);
  });

  it("prints a plain line at every tenth when stdout is not a terminal", async () => {
    const { url } = await serve();
    const io = createFakeIo();
    await run(["simulate", url, "--users", "20", "--changes", "0"], io);
    const lines = io.out.split("\n").filter((line) => line.startsWith("initial sync:"));
    expect(lines[0]).toBe("initial sync:   5%  1/20");
    expect(lines.at(-1)).toBe("initial sync: 100%  20/20");
    expect(lines).toHaveLength(11);
    expect(io.out).not.toContain("\r");
    expect(io.out).not.toContain("\nChanges:");
  });

  it("draws a bar in place on a terminal", async () => {
    const { url } = await serve();
    const io = createFakeIo({ tty: true, columns: 60 });
    await run(["simulate", url, "--users", "20", "--changes", "0"], io);
    expect(io.out).toContain("\rinitial sync [");
    expect(io.out).toMatch(/\] 100% {2}20\/20\nInitial sync: 20 of 20/);
  });

  it("makes the same directory for the same seed", async () => {
    const first = await serve();
    const second = await serve();
    await run(["simulate", first.url, "--users", "15", "--seed", "abc"], createFakeIo());
    await run(["simulate", second.url, "--users", "15", "--seed", "abc"], createFakeIo());
    expect(await second.app.store.list()).toEqual(await first.app.store.list());
  });

  it("exits 1 and says where the sync stopped and why, without printing a password", async () => {
    let creates = 0;
    const { url } = await serve(async (request) => {
      if (!request.url.endsWith("/create") || ++creates < 5) return undefined;
      return Response.json({ error: "disk full", echo: await request.json() }, { status: 507 });
    });
    const io = createFakeIo();
    expect(await run(["simulate", url, "--users", "8", "--seed", "4"], io)).toBe(1);
    const fifth = createUserGenerator({ seed: 4, testPrefix: "simulate" }).users(8)[4];
    expect(io.out).toContain("\nInitial sync: 4 of 8 messages in ");
    expect(io.out).toContain(
      `\nSync stopped at create ${fifth?.uuid} (attempt 1): status 507 {"error":"disk full","echo":{`,
    );
    expect(io.out).toContain(
      "\n4 messages not delivered; the platform would resume with this one at its next cycle.\n",
    );
    expect(io.out).not.toContain("\nChanges:");
    for (const user of createUserGenerator({ seed: 4, testPrefix: "simulate" }).users(8)) {
      expect(io.out).not.toContain(user.password);
    }
  });

  it("says to check the base path when ping answers 404 with a web page, as conformance does", async () => {
    const { url } = await serve(
      async () =>
        new Response("<!DOCTYPE html><html><body>Cannot GET /v1/ping</body></html>", {
          status: 404,
          headers: { "content-type": "text/html" },
        }),
    );
    const io = createFakeIo();
    expect(await run(["simulate", url, "--users", "2"], io)).toBe(1);
    expect(io.out).toContain(
      "\nSync stopped at ping (attempt 1): GET /v1/ping answered 404 with an HTML page: these are not the Provisioning API's answers. Check the base path",
    );
    expect(io.out).not.toContain("<!DOCTYPE");
  });

  it("reports an interrupted sync and exits 1 when its signal aborts", async () => {
    const controller = new AbortController();
    const { url } = await serve(async (request) => {
      if (request.url.endsWith("/create")) controller.abort();
      return undefined;
    });
    const io = createFakeIo({ signal: controller.signal });
    expect(await run(["simulate", url, "--users", "5"], io)).toBe(1);
    expect(io.out).toMatch(
      /\nSync interrupted at create simulate-[0-9a-f-]+ \(attempt 1\): aborted\n/,
    );
  });

  it("refuses a wrong command line with exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [["http://a"], /Missing --users/],
      [["http://a", "--users", "0"], /--users takes a whole number of at least 1, not "0"/],
      [["http://a", "--users", "1e3"], /--users takes a whole number/],
      [["http://a", "--users", "5", "--changes", "-1"], /--changes/],
      [["--users", "5"], /Missing <url>/],
      [["localhost:3000", "--users", "5"], /Not an http\(s\) URL/],
    ];
    for (const [args, message] of cases) {
      const io = createFakeIo();
      expect(await run(["simulate", ...args], io)).toBe(2);
      expect(io.err).toMatch(message);
    }
  });
});
