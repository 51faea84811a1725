import { describe, expect, expectTypeOf, it } from "vitest";
import { createLicenseClient, type SdkLicense } from "../../../src/clients/license/index.ts";
import type {
  SdkLicenseFlags,
  sdkLicenseFlagNames,
} from "../../../src/clients/license/sdk-license-schemas.ts";
import { createFakeSdkApi, fakeSdkLicenseDefault } from "../../../src/testing/fake-sdk-api.ts";

const baseUrl = "http://replicated.test:3000";
// Mixed values (airgap and bundle upload against the fake's defaults), so a flag read from the
// wrong key or left at its default shows.
const flags = {
  isAirgapSupported: false,
  isGitOpsSupported: true,
  isIdentityServiceSupported: false,
  isGeoaxisSupported: true,
  isSnapshotSupported: false,
  isSupportBundleUploadSupported: false,
  isSemverRequired: true,
};

describe("license() on the newer API: the license's flags, channel and endpoint", () => {
  it("reads the seven is* flags, channelID as channelId and endpoint, each as the service sent it", async () => {
    const fake = createFakeSdkApi({
      license: {
        ...fakeSdkLicenseDefault,
        channelId: "channel-7",
        endpoint: "https://vendor.test",
        flags,
      },
    });
    const license = await createLicenseClient({ api: "sdk", baseUrl, fetch: fake.fetch }).license();
    expect(license).toMatchObject({
      channelId: "channel-7",
      endpoint: "https://vendor.test",
      ...flags,
    });
    expectTypeOf(license.isSemverRequired).toEqualTypeOf<boolean>();
    expectTypeOf<SdkLicense["channelId"]>().toEqualTypeOf<string>();
    // The names the client and the fake copy the flags by are every flag of the schema.
    expectTypeOf<(typeof sdkLicenseFlagNames)[number]>().toEqualTypeOf<keyof SdkLicenseFlags>();
  });

  it("a flag an older service leaves out reads as false", async () => {
    const fetch = async () =>
      Response.json({
        licenseID: "l-1",
        customerName: "Example",
        isSnapshotSupported: true,
        entitlements: {},
      });
    const license = await createLicenseClient({ api: "sdk", baseUrl, fetch }).license();
    expect(license).toMatchObject({
      isSnapshotSupported: true,
      isGitOpsSupported: false,
      isSemverRequired: false,
      channelId: "",
      endpoint: "",
    });
  });
});
