import { describe, expect, it } from "vitest";
import { openApiSelection, withApiMembers } from "../../../src/clients/sdk-api/api-client.ts";

describe("the members every client of several APIs shares", () => {
  it("normalizes the options once, at creation: a wrong one throws before any call", () => {
    // Catches a client start that forgets normalizeOptions: the error would come at the first call.
    expect(() => openApiSelection({ api: "integration", timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => openApiSelection({ api: "integration", baseUrl: "http://x.test" })).not.toThrow();
  });

  it('takes "auto" as the newer API for a client only it serves (the app client)', () => {
    const address = { baseUrl: "http://replicated.test" };
    expect(openApiSelection(address, true).decided()?.kind).toBe("sdk");
    expect(openApiSelection(address).decided()).toBeUndefined();
  });

  it("adds api, capabilities, detectApi and serviceVersion to the client's own calls", async () => {
    const selection = openApiSelection({ api: "sdk", baseUrl: "http://replicated.test" });
    const calls = { own: () => "mine" };
    const client = withApiMembers(selection, "license", calls);
    expect(client).toBe(calls);
    expect(client.own()).toBe("mine");
    expect(client.api).toBe("sdk");
    expect(client.capabilities.signedLicenseFields).toBe(true);
    await expect(client.detectApi()).resolves.toBe("sdk");
    expect(Object.keys(client)).toEqual([
      "own",
      "api",
      "capabilities",
      "detectApi",
      "serviceVersion",
    ]);
  });

  it("reads api as undecided, naming the client, before auto with a baseUrl has asked", () => {
    const selection = openApiSelection({ baseUrl: "http://undecided.test" });
    const client = withApiMembers(selection, "version", {});
    expect(() => client.api).toThrow(/version/);
    expect(() => client.capabilities).toThrow(/version/);
  });
});
