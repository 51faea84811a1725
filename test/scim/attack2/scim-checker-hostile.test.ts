// Attack 2: `runConformance` (and `conformance --scim`) against a hostile SCIM service on loopback.
// What held: a redirect (302 reported, not followed), a web page, a hang (time-out named), a huge
// answer (read up to the cap). What does not: an answer that never ends.
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { runConformance } from "../../../src/testing/index.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(listener: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/scim/v2`;
}

describe("a SCIM service whose answers never end", () => {
  // Each answer is read up to 64 KiB and cut: the report says "schemas absent" (as if the service
  // had answered a JSON object without schemas), and the run goes on through all 23 checks, each
  // against a service that cannot be checked. The connection test should stop the run, saying
  // the answer exceeded the cap.
  it("stops after the connection test and says the answer was cut at the cap", async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/scim+json" });
      const timer = setInterval(() => response.write("[".repeat(4096)), 1);
      response.on("close", () => clearInterval(timer));
    });
    const report = await runConformance(url, { scim: { token: "t" }, timeoutMs: 5000 });
    expect(report.passed).toBe(false);
    expect(report.results).toHaveLength(1);
    expect(report.stoppedEarly).toBeDefined();
    expect(`${report.stoppedEarly} ${report.results[0]?.actual}`).toMatch(
      /KiB|too large|too long|exceed|cut|truncat/i,
    );
  });
});

describe("what held", () => {
  it("a redirect is reported as its status, not followed", async () => {
    let followed = false;
    const target = await serve((_request, response) => {
      followed = true;
      response.end("{}");
    });
    const url = await serve((_request, response) => {
      response.writeHead(302, { location: target });
      response.end();
    });
    const report = await runConformance(url, { scim: { token: "t" }, timeoutMs: 5000 });
    expect(report.passed).toBe(false);
    expect(report.stoppedEarly).toMatch(/302/);
    expect(followed).toBe(false);
  });

  it("a web page stops the run with the base URL named", async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html>hello</html>");
    });
    const report = await runConformance(url, { scim: { token: "t" }, timeoutMs: 5000 });
    expect(report.results).toHaveLength(1);
    expect(report.stoppedEarly).toMatch(/not a SCIM service/);
  });
});
