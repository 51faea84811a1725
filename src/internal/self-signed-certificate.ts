/** A PEM private key and the certificate that it signed for itself. */
export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const day = 24 * 60 * 60 * 1000;

/**
 * Generates a short-lived self-signed certificate for localhost, 127.0.0.1 and ::1, the way the
 * platform serves its Integration API: for local HTTPS fakes and TLS tests. It is made with
 * WebCrypto and @peculiar/x509, the same on Node, Bun and Deno, without an `openssl` command.
 * Like `openssl req -x509`, it is its own CA (basicConstraints CA:TRUE), so that clients can trust
 * it as `tls.ca`. The libraries load on first use: only `mock-api --https` and tests need them.
 */
export async function createSelfSignedCertificate(): Promise<SelfSignedCertificate> {
  // @peculiar/x509 needs the Reflect metadata API (through tsyringe) before it loads.
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=localhost",
    // A minute back, so that a clock a little behind the client's does not make it "not yet valid".
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 2 * day),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
        { type: "ip", value: "::1" },
      ]),
    ],
  });
  const privateKey = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    key: x509.PemConverter.encode(privateKey, "PRIVATE KEY"),
    cert: certificate.toString("pem"),
  };
}
