import { describe, expect, it } from "vitest";
import {
  fromBrowser,
  headerOf,
  isHeaderList,
  withHeaderRecord,
} from "../../src/provisioning/headers.ts";

describe("headers", () => {
  const raw = ["Host", "x", "CONTENT-TYPE", "application/json", "X-Token", "a", "x-token", "b"];

  it("reads one header from Node's rawHeaders in any case, or from a record", () => {
    expect(isHeaderList(raw)).toBe(true);
    expect(headerOf(raw, "content-type")).toBe("application/json");
    expect(headerOf(raw, "content-length")).toBeUndefined();
    expect(headerOf({ "content-type": "text/plain" }, "content-type")).toBe("text/plain");
    expect(headerOf({ "set-cookie": ["a", "b"] }, "set-cookie")).toBeUndefined();
  });

  it("gives a guard a record, repeated headers joined, __proto__ a plain header", () => {
    const guarded = withHeaderRecord({
      method: "GET",
      path: "/v1/ping",
      headers: [...raw, "__proto__", "p"],
      remoteAddress: "10.0.0.1",
    });
    expect({ ...guarded.headers }).toEqual(
      Object.fromEntries([
        ["host", "x"],
        ["content-type", "application/json"],
        ["x-token", "a, b"],
        ["__proto__", "p"],
      ]),
    );
    expect(guarded.remoteAddress).toBe("10.0.0.1");
    const record = { host: "y" };
    expect(withHeaderRecord({ method: "GET", path: "/", headers: record }).headers).toBe(record);
  });

  // Catches: a name compared only as far as the shorter of the two ("Content" taken for
  // content-type, "Orig" for origin).
  it("matches a raw header name whole, not by prefix", () => {
    expect(headerOf(["Content", "x", "Content-Type", "application/json"], "content-type")).toBe(
      "application/json",
    );
    expect(fromBrowser(["Orig", "https://evil.example"])).toBe(false);
  });

  // Catches: a raw-list scan that takes any Sec-Fetch-Site, or any header valued "same-site", for
  // a browser's.
  it("takes a raw list for a browser's only by Origin or a cross-site Sec-Fetch-Site", () => {
    expect(fromBrowser(["Sec-Fetch-Site", "same-origin", "X-Zone", "same-site"])).toBe(false);
    expect(fromBrowser(["Sec-Fetch-Site", "none"])).toBe(false);
    expect(fromBrowser(["Host", "app", "Sec-Fetch-Site", "cross-site"])).toBe(true);
  });
});
