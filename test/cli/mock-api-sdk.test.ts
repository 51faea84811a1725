import { afterEach, describe, expect, it } from "vitest";
import { createAppClient, isReadOnlyModeError } from "../../src/clients/app/index.ts";
import { createLicenseClient } from "../../src/clients/license/index.ts";
import { createVersionClient } from "../../src/clients/version/index.ts";
import { startMockApi } from "./start-mock-api.ts";

const running: Awaited<ReturnType<typeof startMockApi>>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((mock) => mock.stop()));
});
async function start(args: string[]) {
  const mock = await startMockApi(["--port", "0", ...args]);
  running.push(mock);
  return mock;
}

describe("mock-api --api sdk", () => {
  it("serves the newer API over HTTP: the clients' mapped calls and the app client's writes", async () => {
    const mock = await start(["--api", "sdk", "--current-version", "2.0.0", "--updates", "2"]);
    expect(mock.stdout()).toContain("Fake newer in-cluster API listening on");
    const version = createVersionClient({ api: "sdk", baseUrl: mock.baseUrl });
    expect((await version.current()).version).toBe("2.0.0");
    expect((await version.updates()).map((update) => update.version)).toEqual(["2.0.2", "2.0.1"]);
    const app = createAppClient({ api: "sdk", baseUrl: mock.baseUrl });
    expect(await app.setCustomMetrics({ users: 1 })).toEqual({ status: 200, replayed: false });
    expect(await app.setCustomMetrics({ users: 1 })).toEqual({ status: 200, replayed: true });
    expect(mock.stdout()).toContain("(replayed from the 60-second cache)");
  });

  it("prints what each write sent: metrics, tags, metadata; a bundle by its size; never a secret", async () => {
    const mock = await start(["--api", "sdk"]);
    const app = createAppClient({ api: "sdk", baseUrl: mock.baseUrl });
    await app.setCustomMetrics({ activeUsers: 42, plan: "enterprise" });
    await app.setInstanceTags({ name: "acme-prod" }, { force: true });
    await app.updateSupportBundleMetadata({ ticket: "T-1\u0085" });
    await app.uploadSupportBundle(new Uint8Array(1234));
    await fetch(`${mock.baseUrl}/mock/v1/control`, {
      method: "POST",
      body: JSON.stringify({ failNext: { count: 0 }, password: "hunter2" }),
    });
    const lines = mock.stdout().split("\n");
    const line = (path: string) => lines.find((text) => text.includes(` ${path} answered`)) ?? "";
    expect(line("/api/v1/app/custom-metrics")).toMatch(
      /POST \/api\/v1\/app\/custom-metrics answered 200: \{"data":\{"activeUsers":42,"plan":"enterprise"\}\}$/,
    );
    expect(line("/api/v1/app/instance-tags")).toMatch(
      /: \{"data":\{"force":true,"tags":\{"name":"acme-prod"\}\}\}$|: \{"data":\{"tags":\{"name":"acme-prod"\},"force":true\}\}$/,
    );
    // A C1 control from the network is escaped, never written raw to the terminal.
    expect(line("/api/v1/supportbundle/metadata")).toContain('{"data":{"ticket":"T-1\\u0085"}}');
    expect(line("/api/v1/supportbundle")).toMatch(/answered 20\d: \(1234 bytes of [^)]+\)$/);
    expect(line("/mock/v1/control")).toContain('"password":"[redacted]"');
    expect(mock.stdout()).not.toContain("hunter2");
  });

  it("switches modes and queues failures through its control route, and edits integration-mode data", async () => {
    const mock = await start(["--api", "sdk", "--integration-mode"]);
    const control = (body: unknown) =>
      fetch(`${mock.baseUrl}/mock/v1/control`, { method: "POST", body: JSON.stringify(body) });
    expect((await control({ mode: { readOnly: true } })).status).toBe(200);
    const app = createAppClient({ api: "sdk", baseUrl: mock.baseUrl, retry: { limit: 0 } });
    await expect(app.setInstanceTags({ name: "x" })).rejects.toSatisfy(isReadOnlyModeError);
    await control({ failNext: { count: 1, status: 503 } });
    await expect(app.status()).rejects.toThrow(/503/);
    // Read-only mode refuses mock data updates too (422): leave it first.
    await control({ mode: { readOnly: false } });
    const edited = await fetch(`${mock.baseUrl}/api/v1/integration/mock-data`, {
      method: "POST",
      body: JSON.stringify({
        version: "v2",
        currentRelease: { versionLabel: "9.9.9", createdAt: "2024-01-01T00:00:00Z" },
        availableReleases: [{ versionLabel: "10.0.0", createdAt: "2024-02-01T00:00:00Z" }],
      }),
    });
    expect(edited.status).toBe(201);
    const info = await app.info();
    expect(info).toMatchObject({ currentRelease: { version: "9.9.9" }, mockData: true });
    const updates = await createVersionClient({ api: "sdk", baseUrl: mock.baseUrl }).updates();
    expect(updates.map((update) => update.version)).toEqual(["10.0.0"]);
  });

  it("--read-only refuses what the service refuses and takes custom metrics without storing them", async () => {
    const mock = await start(["--api", "sdk", "--read-only"]);
    const app = createAppClient({ api: "sdk", baseUrl: mock.baseUrl, retry: { limit: 0 } });
    expect(await app.setCustomMetrics({ users: 1 })).toEqual({ status: 200, replayed: false });
    expect(await app.updateCustomMetrics({ users: 2 })).toEqual({ status: 200, replayed: false });
    await expect(app.deleteCustomMetric("users")).rejects.toSatisfy(isReadOnlyModeError);
    await expect(app.setInstanceTags({ name: "x" })).rejects.toSatisfy(isReadOnlyModeError);
    await expect(app.setSupportBundleMetadata({ a: "b" })).rejects.toSatisfy(isReadOnlyModeError);
    expect(mock.stdout()).toContain("readOnly");
  });

  it("--api kots serves the admin console's license endpoint", async () => {
    const mock = await start(["--api", "kots", "--license-field", "seats=5"]);
    const license = await createLicenseClient({ api: "kots", baseUrl: mock.baseUrl }).license();
    expect(license.fields).toMatchObject([{ field: "seats", value: 5, type: "Integer" }]);
  });

  it("refuses the newer API's switches without --api sdk", async () => {
    await expect(startMockApi(["--port", "0", "--read-only"])).rejects.toThrow(/add --api sdk/);
  });
});
