import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSelfSignedCertificate } from "../../src/internal/self-signed-certificate.ts";

describe("createSelfSignedCertificate", () => {
  it("makes a certificate for the loopback names, signed by its own key", async () => {
    const { key, cert } = await createSelfSignedCertificate();
    const certificate = new X509Certificate(cert);
    expect(certificate.subjectAltName).toBe(
      "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1",
    );
    expect(certificate.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(certificate.verify(certificate.publicKey)).toBe(true);
  });
});
