import { describe, expect, it } from "vitest";
import { allowAddresses, type GuardedRequest, sharedSecret } from "../../src/provisioning/index.ts";

const request = (extra: Partial<GuardedRequest>): GuardedRequest => ({
  method: "GET",
  path: "/v1/ping",
  headers: {},
  ...extra,
});

describe("sharedSecret", () => {
  it("accepts exactly the secret, in the named header (any case)", async () => {
    const guard = sharedSecret({ header: "X-Provisioning-Token", secret: "s3cret-token" });
    expect(await guard(request({ headers: { "x-provisioning-token": "s3cret-token" } }))).toBe(
      true,
    );
    for (const value of ["s3cret-toke", "s3cret-token ", "S3CRET-TOKEN", "", undefined]) {
      expect(await guard(request({ headers: { "x-provisioning-token": value } }))).toBe(false);
    }
    expect(await guard(request({ headers: { "x-provisioning-token": ["s3cret-token"] } }))).toBe(
      false,
    );
    expect(await guard(request({ headers: { authorization: "s3cret-token" } }))).toBe(false);
  });

  it("refuses an empty secret", () => {
    expect(() => sharedSecret({ header: "x-token", secret: "" })).toThrow(TypeError);
  });
});

describe("allowAddresses", () => {
  const guard = allowAddresses([
    "10.0.0.0/8",
    "192.168.1.7",
    "fd00::/8",
    "::1",
    "::ffff:172.16.0.0/108",
  ]);
  const allows = (remoteAddress?: string) =>
    guard(request(remoteAddress === undefined ? {} : { remoteAddress }));

  it.each([
    ["10.255.0.1", true],
    ["::ffff:10.1.2.3", true],
    ["192.168.1.7", true],
    ["192.168.1.8", false],
    ["11.0.0.1", false],
    ["fd12:3456::1", true],
    ["fe80::1%eth0", false],
    ["::1", true],
    ["0:0:0:0:0:0:0:1", true],
    ["::2", false],
    ["172.16.200.1", true],
    ["172.32.0.1", false],
    ["not an address", false],
    [undefined, false],
  ])("%s → %s", (address, expected) => {
    expect(allows(address)).toBe(expected);
  });

  it("never reads X-Forwarded-For", () => {
    expect(
      guard(request({ remoteAddress: "8.8.8.8", headers: { "x-forwarded-for": "10.0.0.1" } })),
    ).toBe(false);
  });

  it("matches prefixes that do not end on a byte boundary", () => {
    const narrow = allowAddresses(["10.0.0.0/13"]);
    expect(narrow(request({ remoteAddress: "10.7.255.255" }))).toBe(true);
    expect(narrow(request({ remoteAddress: "10.8.0.0" }))).toBe(false);
  });

  it("agrees with clientIp's trustProxy on every address and range", async () => {
    const { createClientIp } = await import("../../src/clients/audit/index.ts");
    const ranges = ["10.0.0.0/8", "::/0", "::ffff:10.0.0.0/104", "fd00::/8", "loopback"];
    const peers = [
      "10.1.2.3",
      "8.8.8.8",
      "::ffff:10.9.9.9",
      "a00::1",
      "fd00::1",
      "::1",
      "127.0.0.2",
    ];
    for (const range of ranges) {
      const guard = allowAddresses([range]);
      // A trusted peer makes clientIp read the header, so the answer tells whether it was trusted.
      const trusted = createClientIp({ trustProxy: range });
      for (const peer of peers) {
        const viaHeader =
          trusted({ headers: { "x-forwarded-for": "192.0.2.1" } }, peer) === "192.0.2.1";
        expect([range, peer, guard(request({ remoteAddress: peer }))]).toEqual([
          range,
          peer,
          viaHeader,
        ]);
      }
    }
  });

  it("admits a mapped IPv4 range's addresses only, and never an IPv6 address to an IPv4 range", () => {
    const mapped = allowAddresses(["::ffff:10.0.0.0/104"]);
    expect(mapped(request({ remoteAddress: "10.1.2.3" }))).toBe(true);
    expect(mapped(request({ remoteAddress: "8.8.8.8" }))).toBe(false);
    const v4 = allowAddresses(["10.0.0.0/8"]);
    expect(v4(request({ remoteAddress: "a00::1" }))).toBe(false);
    expect(v4(request({ remoteAddress: "::ffff:10.0.0.1" }))).toBe(true);
  });

  it.each([
    "::ffff:10.0.0.0/8",
    "010.0.0.0/8",
    "10.0.0.1%eth0",
    "10.0.0.0/33",
    "10.0.0.0/",
    "10.0.0/8",
    "256.0.0.1",
    "1::2::3",
    "::1/129",
    "x",
    "10.0.0.1/8/8",
  ])("refuses the entry %s", (entry) => {
    expect(() => allowAddresses([entry])).toThrow(TypeError);
  });
});
