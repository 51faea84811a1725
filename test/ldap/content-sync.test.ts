// The ldapts hook of Content Sync. What it carries is tested on a real slapd (slapd.test.ts); here,
// that it declines an ldapts whose parser it does not recognise.
import { describe, expect, it } from "vitest";
import { hookClient } from "../../src/ldap/content-sync.ts";

describe("hookClient", () => {
  it("declines a client whose message parser lacks the hook points, rather than guess", () => {
    expect(hookClient({})).toBe(false);
    expect(hookClient({ messageParser: { emit() {} } })).toBe(false);
    expect(hookClient({ messageParser: { _getMessageFromProtocolOperation() {} } })).toBe(false);
  });
});
