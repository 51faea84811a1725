// A type test: the newer API's public types spelled out for their readers (TypeDoc shows them
// instead of the schemas' internal helpers) stay the types their schemas derive.
import { expectTypeOf, it } from "vitest";
import type * as z from "zod/mini";
import type {
  SdkLicenseFlags,
  SdkLicenseInfo,
} from "../../../src/clients/license/sdk-license-schemas.ts";
import type { sdkMockDataSchema } from "../../../src/clients/sdk-api/sdk-schemas.ts";
import type {
  FakeSdkApiOptions,
  FakeSdkAppOptions,
  FakeSdkMockData,
} from "../../../src/testing/index.ts";

/** Recursively spreads interfaces into plain object types, so that equality compares members. */
type Deep<T> = T extends (infer Item)[]
  ? Deep<Item>[]
  : T extends object
    ? { [Key in keyof T]: Deep<T[Key]> }
    : T;

it("SdkLicenseFlags is the schema's seven flags", () => {
  expectTypeOf<Deep<SdkLicenseFlags>>().toEqualTypeOf<
    Deep<Pick<SdkLicenseInfo, keyof SdkLicenseFlags>>
  >();
  expectTypeOf<keyof SdkLicenseInfo>().toExtend<string>();
});

it("FakeSdkMockData is what the mock-data schema takes", () => {
  expectTypeOf<Deep<FakeSdkMockData>>().toEqualTypeOf<Deep<z.input<typeof sdkMockDataSchema>>>();
});

it("FakeSdkAppOptions is the app's part of FakeSdkApiOptions, exported for its readers", () => {
  type AppPart = Pick<FakeSdkApiOptions, keyof FakeSdkAppOptions>;
  expectTypeOf<Deep<AppPart>>().toEqualTypeOf<Deep<FakeSdkAppOptions>>();
});
