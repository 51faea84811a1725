import { createPrivateKey, X509Certificate } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  createSelfSignedCertificate,
  integer,
  oid,
  tlv,
} from "../../src/cli/self-signed-certificate.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("createSelfSignedCertificate", () => {
  it("makes a certificate for the loopback names, signed by its own key", async () => {
    const { key, cert } = await createSelfSignedCertificate();
    const certificate = new X509Certificate(cert);
    expect(certificate.subjectAltName).toBe(
      "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    expect(certificate.subject).toBe("CN=localhost");
    expect(certificate.ca).toBe(true);
    expect(certificate.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(certificate.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    const now = Date.now();
    expect(Date.parse(certificate.validFrom)).toBeLessThan(now);
    expect(Date.parse(certificate.validTo)).toBeGreaterThan(now + 24 * 60 * 60 * 1000);
  });

  it("signs every time in valid DER, whatever bytes the signature's r and s start with", async () => {
    // Half of all r and s have their top bit set and need a 0 byte before them in DER.
    for (let round = 0; round < 20; round++) {
      const { cert } = await createSelfSignedCertificate();
      const certificate = new X509Certificate(cert);
      expect(certificate.verify(certificate.publicKey)).toBe(true);
    }
  });

  it("serves TLS that a client trusting it as its CA accepts for 127.0.0.1", async () => {
    const { key, cert } = await createSelfSignedCertificate();
    const server = createServer({ key, cert }, (_request, response) => response.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo;
      const { request } = await import("node:https");
      const body = await new Promise<string>((resolve, reject) => {
        request(`https://127.0.0.1:${port}/`, { ca: cert, agent: false }, (response) => {
          let text = "";
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () => resolve(text));
        })
          .on("error", reject)
          .end();
      });
      expect(body).toBe("ok");
    } finally {
      server.close();
    }
  });
});

describe("the DER encoding", () => {
  it("writes lengths in the short form below 128 and the long form from 128", () => {
    expect(hex(tlv(0x04, new Uint8Array(3)))).toBe("0403000000");
    expect(hex(tlv(0x04, new Uint8Array(127))).slice(0, 4)).toBe("047f");
    expect(hex(tlv(0x04, new Uint8Array(128))).slice(0, 6)).toBe("048180");
    expect(hex(tlv(0x04, new Uint8Array(300))).slice(0, 8)).toBe("0482012c");
  });

  it("writes integers minimal and positive", () => {
    expect(hex(integer(Uint8Array.of(0, 0, 0x7f)))).toBe("02017f");
    expect(hex(integer(Uint8Array.of(0x80)))).toBe("02020080");
    expect(hex(integer(Uint8Array.of(0, 0x80, 1)))).toBe("0203008001");
    expect(hex(integer(Uint8Array.of(0, 0)))).toBe("020100");
  });

  it("writes object identifiers in base 128", () => {
    expect(hex(oid("2.5.4.3"))).toBe("0603550403");
    expect(hex(oid("1.2.840.10045.4.3.2"))).toBe("06082a8648ce3d040302");
    expect(hex(oid("1.3.6.1.5.5.7.3.1"))).toBe("06082b06010505070301");
  });
});
