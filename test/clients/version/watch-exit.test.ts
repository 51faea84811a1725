import { afterEach, describe, expect, it } from "vitest";
import { createSelfSignedCertificate } from "../../../src/cli/self-signed-certificate.ts";
import { runModule } from "../integration-api/child-process.ts";
import { type LocalServer, startServer } from "../integration-api/local-server.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("watchUpdates and process exit", () => {
  it("lets the process exit while it waits between polls, over a kept-alive TLS connection", async () => {
    const certificate = await createSelfSignedCertificate();
    const server = await startServer((_request, response) => {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end('[{"version":"101","release_sequence":2}]');
    }, certificate);
    servers.push(server);
    const result = await runModule(`
      const { createVersionClient } = await import(src + "clients/version/index.ts");
      const version = createVersionClient({ api: "integration", baseUrl: ${JSON.stringify(server.url)}, tls: { ca: ${JSON.stringify(certificate.cert)} } });
      void (async () => {
        for await (const updates of version.watchUpdates({ intervalMs: 3_600_000 })) console.log(updates.length);
      })();
    `);
    expect(result).toMatchObject({ code: 0, stdout: "1\n" });
  });
});
