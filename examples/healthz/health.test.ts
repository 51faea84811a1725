import { createAuditClient } from "platform-integration/audit";
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";
import { createFakeIntegrationApi } from "platform-integration/testing";
import { describe, expect, it } from "vitest";
import { healthReport, healthz } from "./health.ts";

const baseUrl = "http://platform.test";
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const create = (uuid: string) => ({
  method: "POST",
  path: "/v1/user/create",
  headers: {},
  body: new TextEncoder().encode(JSON.stringify({ uuid })),
});

describe("the /healthz example", () => {
  it("answers 200 with both parts' figures while all is well", async () => {
    const api = createFakeIntegrationApi();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, logger: silent });
    const provisioning = createProvisioningHandler({
      store: new MemoryUserStore(),
      onChange: ({ uuid }) => audit.record({ action: "directory.user.created", description: uuid }),
    });
    expect((await provisioning.handle(create("u-1"))).status).toBe(201);
    await audit.flush();
    const { status, body } = healthz(provisioning, audit, { maxQueueEvents: 10_000 });
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({
      status: "ok",
      problems: [],
      provisioning: { messages: { create: { "201": 1 } }, inFlight: 0 },
      audit: { delivered: 1, queued: 0, dropped: 0 },
    });
  });

  it("answers 503 when audit delivery stopped on a configuration error", async () => {
    const audit = createAuditClient({ baseUrl: "https://user:pw@platform.test", logger: silent });
    audit.record({ action: "a.one" });
    await audit.flush({ timeoutMs: 100 });
    const provisioning = createProvisioningHandler({ store: new MemoryUserStore() });
    const { status, body } = healthz(provisioning, audit, { maxQueueEvents: 10_000 });
    expect(status).toBe(503);
    expect(JSON.parse(body).problems).toEqual([
      expect.stringMatching(/^audit delivery stopped: .*user name or password/),
    ]);
    await audit.close({ timeoutMs: 0 });
  });

  it("is degraded while the audit queue is nearly full", async () => {
    const api = createFakeIntegrationApi();
    const audit = createAuditClient({
      baseUrl,
      fetch: api.fetch,
      logger: silent,
      maxQueueEvents: 10,
    });
    api.failNext(1_000, { networkError: true });
    for (let index = 0; index < 9; index++) audit.record({ action: "a.one" });
    const provisioning = createProvisioningHandler({ store: new MemoryUserStore() });
    const report = healthReport(provisioning, audit, { maxQueueEvents: 10 });
    expect(report.problems).toEqual(["audit queue at 9 of 10 events"]);
    api.reset();
    await audit.close({ timeoutMs: 0 });
  });

  it("is degraded for a while after the user store failed", async () => {
    const api = createFakeIntegrationApi();
    const audit = createAuditClient({ baseUrl, fetch: api.fetch, logger: silent });
    const failing = {
      upsert: () => Promise.reject(new Error("database down")),
      delete: () => Promise.reject(new Error("database down")),
    };
    const provisioning = createProvisioningHandler({ store: failing, logger: silent });
    expect((await provisioning.handle(create("u-1"))).status).toBe(503);
    const at = Date.parse(provisioning.stats().lastError?.at ?? "");
    const soon = healthReport(provisioning, audit, { maxQueueEvents: 10, now: () => at + 1_000 });
    expect(soon.problems).toEqual([
      `the user store failed at ${new Date(at).toISOString()} (store_unavailable)`,
    ]);
    const later = healthReport(provisioning, audit, {
      maxQueueEvents: 10,
      now: () => at + 600_000,
    });
    expect(later.status).toBe("ok");
  });
});
