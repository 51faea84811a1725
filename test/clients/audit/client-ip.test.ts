import { describe, expect, it } from "vitest";
import { clientIp, createClientIp } from "../../../src/clients/audit/index.ts";
import { startServer } from "../integration-api/local-server.ts";

/** A request as Node's http module gives it: lower-case header names, the peer on the socket. */
function nodeRequest(
  remoteAddress: string | undefined,
  headers: Record<string, string | string[]> = {},
) {
  return { headers, socket: { remoteAddress } };
}

describe("clientIp", () => {
  it("trusts no proxy by default, so a forged X-Forwarded-For changes nothing", () => {
    expect(clientIp(nodeRequest("203.0.113.9", { "x-forwarded-for": "1.1.1.1" }))).toBe(
      "203.0.113.9",
    );
  });

  it("reads a real Node IncomingMessage, IPv4-mapped or not", async () => {
    const answers: (string | undefined)[] = [];
    const server = await startServer((request, response) => {
      answers.push(clientIp(request), clientIp(request, { trustProxy: "loopback" }));
      response.end();
    });
    await fetch(server.url, { headers: { "x-forwarded-for": "198.51.100.7" } });
    await server.close();
    expect(answers).toEqual(["127.0.0.1", "198.51.100.7"]);
  });

  it("takes the socket's address from the option for a Web Request, and is undefined without one", () => {
    const request = new Request("https://app.test/", {
      headers: { "x-forwarded-for": "198.51.100.7" },
    });
    expect(clientIp(request, { remoteAddress: "10.0.0.1", trustProxy: 1 })).toBe("198.51.100.7");
    expect(clientIp(request, { trustProxy: 1 })).toBeUndefined();
    expect(clientIp(nodeRequest(undefined))).toBeUndefined();
  });

  it("answers the trusted proxy's own address when it sent no forwarding header", () => {
    expect(clientIp(nodeRequest("10.0.0.1"), { trustProxy: 1 })).toBe("10.0.0.1");
  });

  it("unwraps one hop per trusted proxy, from the right", () => {
    const request = nodeRequest("10.0.0.1", {
      "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2",
    });
    expect(clientIp(request, { trustProxy: 0 })).toBe("10.0.0.1");
    expect(clientIp(request, { trustProxy: 1 })).toBe("10.0.0.2");
    expect(clientIp(request, { trustProxy: 2 })).toBe("198.51.100.7");
    // Trusting every hop yields the leftmost address, which the client itself chose.
    expect(clientIp(request, { trustProxy: 10 })).toBe("6.6.6.6");
  });

  it("trusts address ranges, stopping at the first address outside them", () => {
    const request = nodeRequest("10.0.0.1", {
      "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2",
    });
    expect(clientIp(request, { trustProxy: "10.0.0.0/8" })).toBe("198.51.100.7");
    expect(clientIp(request, { trustProxy: ["192.168.0.0/16"] })).toBe("10.0.0.1");
    expect(clientIp(request, { trustProxy: "uniquelocal, 198.51.100.0/24" })).toBe("6.6.6.6");
  });

  it("matches IPv4 ranges against IPv4-mapped socket addresses and returns IPv4", () => {
    const request = nodeRequest("::ffff:127.0.0.1", { "x-forwarded-for": "::ffff:198.51.100.7" });
    expect(clientIp(request, { trustProxy: "loopback" })).toBe("198.51.100.7");
    expect(clientIp(nodeRequest("::ffff:203.0.113.9"))).toBe("203.0.113.9");
  });

  it("handles IPv6 peers and ranges, returning canonical text", () => {
    const request = nodeRequest("2001:DB8::0:1", {
      "x-forwarded-for": "2001:0db8:0000:0000:0000:0000:0000:0042",
    });
    expect(clientIp(request)).toBe("2001:db8::1");
    expect(clientIp(request, { trustProxy: "2001:db8::/64" })).toBe("2001:db8::42");
    expect(clientIp(request, { trustProxy: "::1" })).toBe("2001:db8::1");
  });

  it("strips ports that some load balancers append", () => {
    const request = nodeRequest("10.0.0.1", {
      "x-forwarded-for": "[2001:db8::5]:443, 198.51.100.7:51234",
    });
    expect(clientIp(request, { trustProxy: 1 })).toBe("198.51.100.7");
    expect(clientIp(request, { trustProxy: 2 })).toBe("2001:db8::5");
  });

  it("reads repeated headers, as arrays or joined", () => {
    const request = nodeRequest("10.0.0.1", { "x-forwarded-for": ["198.51.100.7", "10.0.0.2"] });
    expect(clientIp(request, { trustProxy: "10.0.0.0/8" })).toBe("198.51.100.7");
    const headers = new Headers();
    headers.append("x-forwarded-for", "198.51.100.8");
    headers.append("x-forwarded-for", "10.0.0.2");
    expect(
      clientIp({ headers, socket: { remoteAddress: "10.0.0.1" } }, { trustProxy: "10.0.0.0/8" }),
    ).toBe("198.51.100.8");
  });

  it("reads the standard Forwarded header when asked, and only then", () => {
    const forwarded = 'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711"';
    const request = nodeRequest("10.0.0.1", { forwarded, "x-forwarded-for": "6.6.6.6" });
    expect(clientIp(request, { trustProxy: 1, header: "forwarded" })).toBe("2001:db8:cafe::17");
    expect(clientIp(request, { trustProxy: 2, header: "forwarded" })).toBe("192.0.2.60");
    expect(clientIp(request, { trustProxy: 5, header: "forwarded" })).toBe("192.0.2.60");
    // `for` need not come first in its element.
    const later = nodeRequest("10.0.0.1", { forwarded: "by=10.0.0.9;for=192.0.2.61" });
    expect(clientIp(later, { trustProxy: 1, header: "forwarded" })).toBe("192.0.2.61");
    expect(clientIp(request, { trustProxy: 1 })).toBe("6.6.6.6");
  });

  it("reads quoted Forwarded values whole: commas, semicolons and escaped quotes inside them", () => {
    // Two elements; a split that ignored quotes or escapes would find more, and the rightmost
    // would not be an address.
    const forwarded =
      'for=198.51.100.7;note="a, b; c", for="10.0.0.\\2";note="say \\"hi, there\\""';
    const request = nodeRequest("10.0.0.1", { forwarded });
    expect(clientIp(request, { trustProxy: "10.0.0.0/8", header: "forwarded" })).toBe(
      "198.51.100.7",
    );
  });

  it("is undefined when a trusted proxy reports something other than an address", () => {
    for (const forwarded of ["for=unknown", 'for="_hidden"', "proto=https"]) {
      expect(
        clientIp(nodeRequest("10.0.0.1", { forwarded }), { trustProxy: 1, header: "forwarded" }),
        forwarded,
      ).toBeUndefined();
    }
    expect(
      clientIp(nodeRequest("10.0.0.1", { "x-forwarded-for": "not-an-ip" }), { trustProxy: 1 }),
    ).toBeUndefined();
    // A trusted hop that is not an address ends the walk: the hops left of it are not read.
    expect(
      clientIp(nodeRequest("10.0.0.1", { "x-forwarded-for": "198.51.100.7, unknown" }), {
        trustProxy: 3,
      }),
    ).toBeUndefined();
    // An IPv6 address whose bracket is not closed: not "2001:db8::" (the text minus its ends).
    expect(
      clientIp(nodeRequest("10.0.0.1", { "x-forwarded-for": "[2001:db8::5" }), { trustProxy: 1 }),
    ).toBeUndefined();
  });

  it("accepts a function of the address and its hop", () => {
    const seen: [string, number][] = [];
    const request = nodeRequest("::ffff:10.0.0.1", { "x-forwarded-for": "198.51.100.7, 10.0.0.2" });
    const trustProxy = (address: string, hop: number) => {
      seen.push([address, hop]);
      return address.startsWith("10.");
    };
    expect(clientIp(request, { trustProxy })).toBe("198.51.100.7");
    expect(seen).toEqual([
      ["10.0.0.1", 0],
      ["10.0.0.2", 1],
      ["198.51.100.7", 2],
    ]);
  });

  it("rejects a trustProxy it cannot read", () => {
    const request = nodeRequest("10.0.0.1");
    expect(() => clientIp(request, { trustProxy: "10.0.0.0/99" })).toThrow(
      /is not an IP address, a CIDR range/,
    );
    expect(() => clientIp(request, { trustProxy: "10.0.0.0/99" })).toThrow(/trustProxy/);
    expect(() => clientIp(request, { trustProxy: ["constructor"] })).toThrow(TypeError);
    expect(() => clientIp(request, { trustProxy: -1 })).toThrow(/non-negative integer/);
  });

  it("rejects a header it would never find, and reads the two it knows in any case", () => {
    const request = nodeRequest("10.0.0.1", { forwarded: "for=192.0.2.60" });
    expect(() => clientIp(request, { trustProxy: 1, header: "x-real-ip" as "forwarded" })).toThrow(
      /header must be "x-forwarded-for" or "forwarded"/,
    );
    expect(clientIp(request, { trustProxy: 1, header: "Forwarded" as "forwarded" })).toBe(
      "192.0.2.60",
    );
  });
});

describe("createClientIp", () => {
  it("checks its options when it is created, before any request", () => {
    expect(() => createClientIp({ trustProxy: "10.0.0.0/99" })).toThrow(
      /is not an IP address, a CIDR range/,
    );
    expect(() => createClientIp({ trustProxy: 1.5 })).toThrow(/non-negative integer/);
    expect(() => createClientIp({ header: "x-client-ip" as "forwarded" })).toThrow(TypeError);
  });

  it("answers as clientIp does with the same options, request after request", () => {
    const ipOf = createClientIp({ trustProxy: "10.0.0.0/8" });
    const proxied = nodeRequest("10.0.0.1", { "x-forwarded-for": "6.6.6.6, 198.51.100.7" });
    const direct = nodeRequest("203.0.113.9", { "x-forwarded-for": "6.6.6.6" });
    expect([ipOf(proxied), ipOf(direct), ipOf(proxied)]).toEqual([
      "198.51.100.7",
      "203.0.113.9",
      "198.51.100.7",
    ]);
    expect(ipOf(direct)).toBe(clientIp(direct, { trustProxy: "10.0.0.0/8" }));
  });

  it("takes a Web Request's socket address as its second argument", () => {
    const ipOf = createClientIp({ trustProxy: 1 });
    const request = new Request("https://app.test/", {
      headers: { "x-forwarded-for": "198.51.100.7" },
    });
    expect(ipOf(request, "10.0.0.1")).toBe("198.51.100.7");
    expect(ipOf(request)).toBeUndefined();
  });
});
