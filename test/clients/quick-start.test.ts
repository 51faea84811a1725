import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startScript } from "./integration-api/child-process.ts";

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
});
