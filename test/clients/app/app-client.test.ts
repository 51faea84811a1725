import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createAppClient,
  isConfigurationError,
  isHttpError,
  isReadOnlyModeError,
  isUnsupportedOperationError,
  Timestamp,
} from "../../../src/clients/app/index.ts";
import { createSdkApiHandlers } from "../../../src/msw/index.ts";
import { createFakeSdkApi, type FakeSdkApiOptions } from "../../../src/testing/fake-sdk-api.ts";

const baseUrl = "http://replicated.test:3000";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

// Each case runs against the fake in-process and behind msw.
function setups(options: FakeSdkApiOptions = {}) {
  const inProcess = createFakeSdkApi(options);
  return [
    {
      name: "fake",
      fake: inProcess,
      client: createAppClient({ api: "sdk", baseUrl, fetch: inProcess.fetch }),
    },
    {
      name: "msw",
      get fake() {
        return this.handlers.api;
      },
      handlers: createSdkApiHandlers({ baseUrl, ...options }),
      get client() {
        server.use(...this.handlers.handlers);
        return createAppClient({ api: "sdk", baseUrl });
      },
    },
  ] as const;
}

describe("createAppClient on the newer API", () => {
  it("status(), info() and history(), marked as integration-mode data when they are", async () => {
    // Integration mode serves the mock data (a dev license's), not the cluster's.
    for (const setup of setups({
      mockData: {
        version: "v2",
        appStatus: {
          state: "degraded",
          resourceStates: [
            { kind: "deployment", name: "web", namespace: "default", state: "degraded" },
          ],
        },
        currentRelease: {
          versionLabel: "2.0.0",
          releaseSequence: 7,
          deployedAt: "2024-03-01T00:00:00Z",
        },
        deployedReleases: [
          { versionLabel: "2.0.0", helmReleaseRevision: 3 },
          { versionLabel: "1.0.0" },
        ],
      },
      integrationMode: true,
    })) {
      const { client } = setup;
      const status = await client.status();
      expect(status).toMatchObject({
        state: "degraded",
        resourceStates: [
          { kind: "deployment", name: "web", namespace: "default", state: "degraded" },
        ],
        mockData: true,
        fromCache: false,
      });
      const info = await client.info();
      expect(info).toMatchObject({ appSlug: "fake-app", releaseSequence: 7, mockData: true });
      expect(
        info.currentRelease.installDate?.equals(Timestamp.parse("2024-03-01T00:00:00.000Z")),
      ).toBe(true);
      const history = await client.history();
      expect(history.releases.map((release) => release.version)).toEqual(["2.0.0", "1.0.0"]);
      expect(history.releases[0]?.helmReleaseRevision).toBe(3);
    }
  });

  it("custom metrics: POST replaces, PATCH merges, DELETE removes", async () => {
    for (const { client, fake } of setups()) {
      await client.setCustomMetrics({ users: 5, plan: "pro" });
      await client.updateCustomMetrics({ users: 6, active: true });
      expect(fake.customMetrics).toEqual({ users: 6, plan: "pro", active: true });
      await client.setCustomMetrics({ only: 1 });
      expect(fake.customMetrics).toEqual({ only: 1 });
      await client.deleteCustomMetric("only");
      expect(fake.customMetrics).toEqual({});
      expect(fake.writes.map(({ method }) => method)).toEqual(["POST", "PATCH", "POST", "DELETE"]);
    }
  });

  it("an identical write within 60 seconds is answered from the replay cache: a success that says so", async () => {
    let now = new Date("2024-01-01T00:00:00Z");
    for (const { client, fake } of setups({ now: () => now })) {
      expect(await client.setCustomMetrics({ users: 5 })).toEqual({ status: 200, replayed: false });
      expect(await client.setCustomMetrics({ users: 5 })).toEqual({ status: 200, replayed: true });
      expect(await client.setCustomMetrics({ users: 6 })).toEqual({ status: 200, replayed: false });
      now = new Date(now.getTime() + 61_000);
      expect(await client.setCustomMetrics({ users: 6 })).toEqual({ status: 200, replayed: false });
      expect(fake.writes.map((write) => write.replayed)).toEqual([false, true, false, false]);
      now = new Date("2024-01-01T00:00:00Z");
    }
  });

  it("read-only mode's 422 is a ReadOnlyModeError, a configuration error, sent once and never retried", async () => {
    for (const { client, fake } of setups({ readOnly: true })) {
      const error = await client
        .setInstanceTags({ name: "prod" })
        .catch((caught: unknown) => caught);
      expect(isReadOnlyModeError(error)).toBe(true);
      expect(isConfigurationError(error)).toBe(true);
      expect((error as Error).message).toMatch(/read-only mode/);
      expect(error).toMatchObject({ retryable: false, attempts: 1 });
      expect(fake.writes).toHaveLength(1);
      expect(fake.instanceTags).toBeUndefined();
    }
  });

  it("instance tags with force, and support bundle metadata", async () => {
    for (const { client, fake } of setups()) {
      await client.setInstanceTags({ name: "acme-prod" }, { force: true });
      expect(fake.instanceTags).toEqual({ force: true, tags: { name: "acme-prod" } });
      await client.setSupportBundleMetadata({ team: "core" });
      await client.updateSupportBundleMetadata({ ticket: "42" });
      expect(fake.supportBundleMetadata).toEqual({ team: "core", ticket: "42" });
    }
  });

  it("uploads a support bundle with its bytes; an air gap answers 400", async () => {
    for (const { client, fake } of setups()) {
      const upload = await client.uploadSupportBundle(new Uint8Array([31, 139, 8, 0]));
      expect(upload).toEqual({ bundleId: "bundle-1", slug: "fake-bundle-1" });
      expect(fake.supportBundles).toEqual([
        { bundleId: "bundle-1", slug: "fake-bundle-1", contentType: "application/gzip", size: 4 },
      ]);
      fake.setMode({ airgap: true });
      const error = await client
        .uploadSupportBundle(new Blob(["x"]))
        .catch((caught: unknown) => caught);
      expect(isHttpError(error) && error.status).toBe(400);
    }
  });

  it("an older service's 404 is a clear 'this service version lacks' error", async () => {
    for (const { client } of setups({ serviceVersion: "1.16.2" })) {
      const error = await client
        .uploadSupportBundle(new Uint8Array([1]))
        .catch((caught: unknown) => caught);
      expect(isUnsupportedOperationError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /this service version lacks support bundle upload \(added in 1\.17\.0\)/,
      );
      expect(error).toMatchObject({ requestSent: true, api: "sdk" });
      await expect(client.setSupportBundleMetadata({ a: "b" })).rejects.toThrow(
        /added in 1\.18\.0/,
      );
    }
  });

  it("refuses what the service would refuse, before any request", async () => {
    for (const { client, fake } of setups()) {
      await expect(client.setCustomMetrics({})).rejects.toThrow(TypeError);
      await expect(client.setCustomMetrics({ bad: null as unknown as string })).rejects.toThrow(
        /null/,
      );
      await expect(client.updateCustomMetrics({ bad: [1] as unknown as string })).rejects.toThrow(
        /array/,
      );
      await expect(client.setCustomMetrics({ bad: Number.NaN })).rejects.toThrow(TypeError);
      await expect(client.setInstanceTags({ n: 1 as unknown as string })).rejects.toThrow(/string/);
      await expect(client.uploadSupportBundle("text" as unknown as Blob)).rejects.toThrow(
        TypeError,
      );
      expect(fake.requests).toEqual([]);
    }
  });
});

describe("createAppClient on an API without these calls", () => {
  it("rejects every call at once, without a request, and capabilities say so", async () => {
    for (const api of ["integration", "kots"] as const) {
      const fake = createFakeSdkApi();
      const client = createAppClient({ api, baseUrl, fetch: fake.fetch });
      expect(client.capabilities).toMatchObject({
        customMetrics: api === "kots",
        appStatus: false,
        supportBundle: false,
      });
      const calls = [
        () => client.info(),
        () => client.status(),
        () => client.history(),
        ...(api === "kots" ? [] : [() => client.setCustomMetrics({ a: 1 })]),
        () => client.updateCustomMetrics({ a: 1 }),
        () => client.deleteCustomMetric("a"),
        () => client.setInstanceTags({ a: "b" }),
        () => client.uploadSupportBundle(new Uint8Array([1])),
        () => client.setSupportBundleMetadata({ a: "b" }),
        () => client.updateSupportBundleMetadata({ a: "b" }),
      ];
      for (const call of calls) {
        const error = await call().catch((caught: unknown) => caught);
        expect(isUnsupportedOperationError(error)).toBe(true);
        expect(error).toMatchObject({ api, requestSent: false });
      }
      expect(fake.requests).toEqual([]);
    }
  });
});
