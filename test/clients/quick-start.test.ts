import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createFakeIntegrationApi } from "../../src/testing/index.ts";
import { serveForEachTest } from "../support/serve-fetch-handler.ts";
import { startScript } from "./integration-api/child-process.ts";

const serve = serveForEachTest();

const quickStart = await readFile(
  new URL("../../examples/quick-start/server.ts", import.meta.url),
  "utf8",
);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits until the Provisioning API answers its ping, or the process ends. */
async function ping(port: number, running: () => boolean): Promise<number> {
  for (;;) {
    try {
      return (await fetch(`http://127.0.0.1:${port}/v1/ping`)).status;
    } catch (error) {
      if (!running()) throw error;
      await sleep(50);
    }
  }
}

describe("the README's quick start", () => {
  it.each([
    ["unset", undefined],
    // Nothing listens on port 9 of the loopback: connections are refused.
    ["unreachable", "http://127.0.0.1:9"],
  ])(
    "keeps the Provisioning API answering when PLATFORM_INTEGRATIONAPI is %s",
    async (_, integrationApi) => {
      const port = await freePort();
      const script = await startScript(quickStart, {
        PORT: String(port),
        PLATFORM_INTEGRATIONAPI: integrationApi,
        PLATFORM_CA: undefined,
      });
      try {
        expect(await ping(port, script.running)).toBe(204);
        const created = await fetch(`http://127.0.0.1:${port}/v1/user/create`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ uuid: "6f1c1d1e-0000-4000-8000-000000000001", username: "bob" }),
        });
        expect(created.status).toBe(201);
        // The failed update check is reported, after which the server still answers.
        while (!script.stderr().includes("Update check failed")) {
          expect(script.running()).toBe(true);
          await sleep(50);
        }
        expect(await ping(port, script.running)).toBe(204);
        expect(script.running()).toBe(true);
        if (integrationApi === undefined) {
          expect(script.stderr()).toContain("PLATFORM_INTEGRATIONAPI");
        }
      } finally {
        await script.stop();
      }
    },
  );

  // Issue 40's fresh eyes: the quick start relied on flushOnExit, which a signal skips, so a
  // server stopped by SIGTERM lost its queued audit events. Catches: a quick start that does not
  // close the audit client on SIGTERM (the process dies by the signal, the event is never sent).
  it("delivers the audit events still queued when SIGTERM comes, then exits 0", async () => {
    const api = createFakeIntegrationApi();
    const port = await freePort();
    let script: Awaited<ReturnType<typeof startScript>> | undefined;
    let auditCalls = 0;
    const platform = await serve(async (request) => {
      if (new URL(request.url).pathname === "/audit/v1/event" && ++auditCalls === 1) {
        // The first attempt fails while the signal arrives: the event is still queued.
        script?.stop();
        return new Response("busy", { status: 503 });
      }
      return api.respond(request);
    });
    script = await startScript(quickStart, {
      PORT: String(port),
      PLATFORM_INTEGRATIONAPI: platform.url,
      PLATFORM_CA: undefined,
    });
    expect(await ping(port, script.running)).toBe(204);
    const created = await fetch(`http://127.0.0.1:${port}/v1/user/create`, {
      method: "POST",
      body: JSON.stringify({ uuid: "6f1c1d1e-0000-4000-8000-000000000002" }),
    });
    expect(created.status).toBe(201);
    expect(await script.exited).toBe(0);
    expect(api.auditEvents).toEqual([
      expect.objectContaining({ action: "directory.user.provisioned" }),
    ]);
  });
});
