import { describe, expect, it } from "vitest";
import {
  createAppClient,
  isHttpError,
  isReadOnlyModeError,
  Timestamp,
} from "../../../src/clients/app/index.ts";
import { createFakeSdkApi, fakeSdkLicenseDefault } from "../../../src/testing/fake-sdk-api.ts";

const baseUrl = "http://replicated.test:3000";

function setup(options: Parameters<typeof createFakeSdkApi>[0] = {}) {
  const fake = createFakeSdkApi(options);
  const client = createAppClient({ api: "sdk", baseUrl, fetch: fake.fetch, retry: { limit: 0 } });
  return { fake, client };
}

describe("createAppClient: integration mode's status and mock data", () => {
  it("integrationStatus(): on or off for a dev license; off (the service's 403) for any other", async () => {
    const { fake, client } = setup();
    expect(await client.integrationStatus()).toEqual({ enabled: false });
    fake.setMode({ integrationMode: true });
    expect(await client.integrationStatus()).toEqual({ enabled: true });
    fake.setLicense({ ...fakeSdkLicenseDefault, licenseType: "prod" });
    expect(await client.integrationStatus()).toEqual({ enabled: false });
    const error = await client.mockData().catch((caught: unknown) => caught);
    expect(isHttpError(error) && error.status).toBe(403);
  });

  it("mockData(): the service's default set, complete, in the SDK's names", async () => {
    const { client } = setup({ integrationMode: true });
    const data = await client.mockData();
    expect(data).toMatchObject({
      version: "v2",
      appStatus: { state: "ready", resourceStates: [{ name: "dev-app" }], sequence: 0 },
      helmChartUrl: "oci://registry.replicated.com/dev-app/dev-channel/dev-parent-chart",
      currentRelease: {
        version: "0.1.3-mock-release",
        channelId: "dev-channel",
        channelName: "Dev Channel",
        channelSequence: 13,
        releaseSequence: 113,
        helmReleaseRevision: 3,
      },
    });
    expect(typeof data.appStatus === "object" && data.appStatus.updatedAt).toBeUndefined();
    expect(data.deployedReleases.map((release) => release.version)).toEqual([
      "0.1.1",
      "0.1.2",
      "0.1.3",
    ]);
    expect(
      data.availableReleases[0]?.releaseDate?.equals(Timestamp.parse("2023-05-24T20:58:07Z")),
    ).toBe(true);
  });

  it("setMockData() replaces the data the app calls then serve", async () => {
    const { client } = setup({ integrationMode: true });
    await client.setMockData({
      appStatus: { state: "degraded" },
      currentRelease: { version: "9.9.9", channelId: "beta", releaseSequence: 99 },
      deployedReleases: [{ version: "9.9.8" }, { version: "9.9.9", helmReleaseRevision: 2 }],
      availableReleases: [{ version: "10.0.0", releaseDate: new Date("2024-02-01T00:00:00Z") }],
    });
    expect(await client.info()).toMatchObject({
      currentRelease: { version: "9.9.9" },
      channelId: "beta",
      releaseSequence: 99,
      appStatus: "degraded",
      mockData: true,
    });
    expect((await client.history()).releases.map((release) => release.version)).toEqual([
      "9.9.8",
      "9.9.9",
    ]);
    expect((await client.status()).state).toBe("degraded");
    expect((await client.mockData()).availableReleases).toMatchObject([{ version: "10.0.0" }]);
    await client.setMockData({ version: "v1", appStatus: "updating" });
    expect(await client.mockData()).toMatchObject({ version: "v1", appStatus: "updating" });
    expect(
      await client.status().catch((caught: unknown) => isHttpError(caught) && caught.status),
    ).toBe(500);
    await expect(client.setMockData({ version: "v1", appStatus: { state: "x" } })).rejects.toThrow(
      TypeError,
    );
  });

  it("setMockData() in read-only mode is a ReadOnlyModeError", async () => {
    const { client } = setup({ integrationMode: true, readOnly: true });
    await expect(client.setMockData({ appStatus: { state: "ready" } })).rejects.toSatisfy(
      isReadOnlyModeError,
    );
  });
});
