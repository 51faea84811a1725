import { describe, expect, it } from "vitest";
import { createFeedSwitch, everyCycle } from "../../src/ldap/feed-notes.ts";

describe("a change feed's switch", () => {
  it("tells a reason known from the start in one report, then nothing", () => {
    const feed = createFeedSwitch(`no entryUUID${everyCycle}`);
    expect(feed.off).toBe(`no entryUUID${everyCycle}`);
    expect(feed.unavailable()).toEqual({ note: `no entryUUID${everyCycle}` });
    expect(feed.unavailable()).toEqual({});
  });

  it("is on until a lasting reason turns it off; the cycle that found it out says it", () => {
    const feed = createFeedSwitch();
    expect(feed.off).toBeUndefined();
    expect(feed.unavailable()).toEqual({});
    expect(feed.lasting("refused")).toEqual({ note: "refused" });
    expect(feed.off).toBe("refused");
    expect(feed.unavailable()).toEqual({});
  });
});
