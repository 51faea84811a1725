import { describe, expectTypeOf, it } from "vitest";
import {
  createVersionClient,
  type SdkVersionUpdate,
  type VersionUpdate,
} from "../../../src/clients/version/index.ts";

describe("the newer API's pending updates", () => {
  it("carry no release sequence, and apply() takes none from them", () => {
    const version = createVersionClient({ api: "sdk" });
    expectTypeOf(version.updates).returns.resolves.items.toEqualTypeOf<SdkVersionUpdate>();
    expectTypeOf<SdkVersionUpdate["releaseSequence"]>().toEqualTypeOf<undefined>();
    const update = {} as SdkVersionUpdate;
    // @ts-expect-error: an update of the newer API has no sequence to apply.
    void version.apply(update.releaseSequence);
  });

  it("the client of an undecided API (auto) is a union told apart by api", () => {
    const version = createVersionClient();
    expectTypeOf<Awaited<ReturnType<typeof version.updates>>[number]>().toEqualTypeOf<
      VersionUpdate | SdkVersionUpdate
    >();
    if (version.api === "integration") {
      expectTypeOf(version.updates).returns.resolves.items.toEqualTypeOf<VersionUpdate>();
    }
  });

  it("a client given only a baseUrl is undecided too: what answers there decides", () => {
    const version = createVersionClient({ baseUrl: "http://renamed:3000" });
    expectTypeOf(version.api).toEqualTypeOf<"integration" | "sdk" | "kots">();
    expectTypeOf(
      createVersionClient({ api: "integration", baseUrl: "http://x" }).api,
    ).toEqualTypeOf<"integration">();
  });
});
