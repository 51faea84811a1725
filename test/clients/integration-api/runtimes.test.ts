import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSelfSignedCertificate } from "../../../src/cli/self-signed-certificate.ts";
import { createIntegrationApi } from "../../../src/clients/integration-api/http.ts";
import { hasRuntime, runModule } from "./child-process.ts";
import { type LocalServer, startServer } from "./local-server.ts";

let server: LocalServer;
let ca: string;
const events: string[] = [];

beforeAll(async () => {
  const certificate = await createSelfSignedCertificate();
  ca = certificate.cert;
  server = await startServer((request, response, body) => {
    if (request.url === "/audit/v1/event") {
      events.push(body);
      response.writeHead(201).end();
    } else {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(`{"agent":${JSON.stringify(request.headers["user-agent"])}}`);
    }
  }, certificate);
});
afterAll(() => server.close());

// Bun and Deno are not devDependencies: a contributor without them skips their cases, and the CI
// step that installs them (.ci/steps/hono-bun-deno.sh) sets the REQUIRE variable, so that a
// missing runtime fails there instead of passing unnoticed.
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_RUNTIMES === "1";

describe.each(["node", "bun", "deno"] as const)("TLS and delivery on %s", (runtime) => {
  if (required) {
    it("is installed", () => expect(hasRuntime(runtime), `${runtime} is required`).toBe(true));
  }
  it.skipIf(!hasRuntime(runtime))(
    "trusts tls.ca, skips verification only when asked, and delivers audit events",
    async () => {
      const result = await runModule(
        `
      const { createIntegrationApi } = await import(src + "clients/integration-api/http.ts");
      const { createAuditClient } = await import(src + "clients/audit/index.ts");
      const baseUrl = ${JSON.stringify(server.url)};
      const get = (options) =>
        createIntegrationApi({ baseUrl, retry: { limit: 0 }, ...options })
          .request("GET", "/version/v1/current", { retry: true })
          .then((response) => JSON.parse(response.body).agent, (error) => error.name);
      console.log(await get({}));
      console.log(await get({ tls: { ca: ${JSON.stringify(ca)} } }));
      console.log(await get({ tls: { rejectUnauthorized: false } }));
      const audit = createAuditClient({ baseUrl, tls: { ca: ${JSON.stringify(ca)} } });
      audit.record({ action: "runtime.${runtime}" });
      console.log(await audit.flush());
      // Without tls.ca: one configuration error, delivery stops, the events are kept.
      const errors = [];
      const untrusted = createAuditClient({
        baseUrl,
        onError: (error) => errors.push(error.name),
        onDrop: () => {},
      });
      for (let index = 0; index < 10; index++) untrusted.record({ action: "untrusted" });
      console.log(await untrusted.flush({ timeoutMs: 60_000 }), errors.join(), untrusted.stats().queued + untrusted.stats().inFlight);
      `,
        runtime,
      );
      expect(result.stderr).toBe("");
      expect(result.stdout.split("\n")).toEqual([
        "ConfigurationError",
        "platform-integration/0.0.0-test",
        "platform-integration/0.0.0-test",
        "true",
        "false ConfigurationError 10",
        "",
      ]);
      expect(events).toContain(`{"action":"runtime.${runtime}"}`);
    },
  );
});

describe.each(["node", "bun", "deno"] as const)("self-signed certificates on %s", (runtime) => {
  it.skipIf(!hasRuntime(runtime))(
    "makes one without an openssl command, which a client then trusts as tls.ca",
    async () => {
      const result = await runModule(
        `
      const { createSelfSignedCertificate } = await import(src + "cli/self-signed-certificate.ts");
      const { key, cert } = await createSelfSignedCertificate();
      console.log(JSON.stringify({ key, cert }));
      `,
        runtime,
      );
      expect(result.stderr).toBe("");
      const made = JSON.parse(result.stdout) as { key: string; cert: string };
      const own = await startServer((_request, response) => response.end("{}"), made);
      try {
        const response = await createIntegrationApi({
          baseUrl: own.url,
          tls: { ca: made.cert },
        }).request("GET", "/version/v1/current", { retry: false });
        expect(response.status).toBe(200);
      } finally {
        await own.close();
      }
    },
  );
});
