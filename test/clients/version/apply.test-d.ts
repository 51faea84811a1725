// What updates() returns, apply() takes, on a client of any API: the default client, whose API is
// decided at run time, is a union of the clients of each API.

import {
  type ApplyTarget,
  createVersionClient,
  type SdkVersionUpdate,
  type VersionUpdate,
} from "platform-integration/version";
import { describe, expectTypeOf, it } from "vitest";

describe("version.apply()", () => {
  it("takes an update from updates() as it is, on the default client", async () => {
    const version = createVersionClient();
    for (const update of await version.updates()) await version.apply(update);
    for await (const list of version.watchUpdates()) {
      const first = list[0];
      if (first !== undefined) await version.apply(first);
    }
  });

  it("takes a release sequence where the type says the Integration API", async () => {
    const version = createVersionClient();
    const [update] = await version.updates();
    if (update === undefined) return;
    // @ts-expect-error On the newer API an update has no sequence: narrow on version.api first.
    await version.apply(update.releaseSequence);
    if (version.api === "integration") {
      for (const pending of await version.updates()) await version.apply(pending.releaseSequence);
    }
    const integration = createVersionClient({ api: "integration" });
    const [next] = await integration.updates();
    if (next !== undefined) await integration.apply(next.releaseSequence);
  });

  it("names its argument type once, for both APIs", () => {
    expectTypeOf<VersionUpdate>().toExtend<ApplyTarget>();
    expectTypeOf<SdkVersionUpdate>().toExtend<ApplyTarget>();
    expectTypeOf<number>().toExtend<ApplyTarget>();
    expectTypeOf<string>().not.toExtend<ApplyTarget>();
  });
});
