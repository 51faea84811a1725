import { describe, expect, it } from "vitest";
import {
  formatIp,
  inRange,
  parseIp,
  parseRange,
  parseRanges,
} from "../../../src/internal/ip/ip-address.ts";

const canonical = (text: string) => {
  const groups = parseIp(text);
  return groups && formatIp(groups);
};

describe("IP addresses", () => {
  it.each([
    ["1.2.3.4", "1.2.3.4"],
    ["::ffff:1.2.3.4", "1.2.3.4"],
    ["::FFFF:0102:0304", "1.2.3.4"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["fe80::1%eth0", "fe80::1"],
    ["64:ff9b::192.0.2.33", "64:ff9b::c000:221"],
  ])("reads %s as %s", (text, expected) => {
    expect(canonical(text)).toBe(expected);
  });

  it.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "01.2.3.4",
    "256.1.1.1",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    ":::",
    "1.2.3.4::",
    "g::1",
    "12345::",
    "1:2:3:4:5:6:7::8",
    "localhost",
    "unknown",
  ])("rejects %j", (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it("matches ranges, IPv4 ones covering IPv4-mapped addresses too", () => {
    const tenSlash8 = parseRange("10.0.0.0/8");
    const v6 = parseRange("2001:db8::/32");
    const single = parseRange("192.168.1.7");
    expect(tenSlash8 && single && v6).toBeTruthy();
    if (!tenSlash8 || !single || !v6) return;
    const ip = (text: string) => parseIp(text) ?? [];
    expect(inRange(ip("10.255.0.1"), tenSlash8)).toBe(true);
    expect(inRange(ip("::ffff:10.0.0.1"), tenSlash8)).toBe(true);
    expect(inRange(ip("11.0.0.1"), tenSlash8)).toBe(false);
    expect(inRange(ip("2001:db8:ffff::1"), v6)).toBe(true);
    expect(inRange(ip("2001:db9::1"), v6)).toBe(false);
    expect(inRange(ip("192.168.1.7"), single)).toBe(true);
    expect(inRange(ip("192.168.1.8"), single)).toBe(false);
    expect(inRange(ip("172.31.255.255"), parseRange("172.16.0.0/12") ?? single)).toBe(true);
    expect(inRange(ip("172.32.0.0"), parseRange("172.16.0.0/12") ?? single)).toBe(false);
    expect(inRange(ip("8.8.8.8"), parseRange("0.0.0.0/0") ?? single)).toBe(true);
  });

  it.each(["10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/8/8", "nonsense/8", "10.0.0.0/"])(
    "rejects the range %j",
    (text) => {
      expect(parseRange(text)).toBeUndefined();
    },
  );
});

describe("one rule for clientIp's trustProxy and allowAddresses", () => {
  const admits = (range: string, address: string) => {
    const parsed = parseRange(range);
    const peer = parseIp(address);
    return parsed !== undefined && peer !== undefined && inRange(peer, parsed);
  };

  it("keeps an IPv4-mapped range inside the mapped space", () => {
    expect(admits("::ffff:10.0.0.0/104", "10.1.2.3")).toBe(true);
    expect(admits("::ffff:10.0.0.0/104", "::ffff:10.1.2.3")).toBe(true);
    expect(admits("::ffff:10.0.0.0/104", "8.8.8.8")).toBe(false);
    expect(admits("::ffff:10.0.0.0/104", "11.0.0.1")).toBe(false);
    // A shorter prefix would read as IPv4 yet cover ::/8, 8.8.8.8 included: refused.
    expect(parseRange("::ffff:10.0.0.0/8")).toBeUndefined();
    expect(parseRange("::ffff:10.0.0.0/95")).toBeUndefined();
    expect(parseRange("::ffff:0:0/96")).toBeDefined();
  });

  it("never lets an IPv4 range admit an IPv6 address, or the reverse", () => {
    expect(admits("10.0.0.0/8", "a00::1")).toBe(false);
    expect(admits("10.0.0.0/8", "a00:0:0:0:0:0:0:1")).toBe(false);
    expect(admits("0.0.0.0/0", "::1")).toBe(false);
    expect(admits("a00::/8", "10.0.0.1")).toBe(false);
  });

  it("lets ::/0 cover IPv4 peers too, as proxy-addr does", () => {
    expect(admits("::/0", "8.8.8.8")).toBe(true);
    expect(admits("::/0", "2001:db8::1")).toBe(true);
  });

  it.each(["010.0.0.0/8", "10.0.0.1%eth0", "10.0.0.1/08x"])("refuses the range %j", (text) => {
    expect(parseRange(text)).toBeUndefined();
  });

  it("expands names and comma-separated lists, and names the option of a bad entry", () => {
    const ranges = parseRanges(["loopback, 10.0.0.0/8", "uniquelocal"], "allowAddresses");
    expect(ranges).toHaveLength(2 + 1 + 4);
    expect(() => parseRanges(["10.0.0.0/8,nope"], "allowAddresses")).toThrow(
      'allowAddresses: "nope" is not an IP address',
    );
  });
});
