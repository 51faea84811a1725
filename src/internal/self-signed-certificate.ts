import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/** A PEM private key and the certificate that it signed for itself. */
export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

const run = promisify(execFile);

/**
 * Generates a short-lived self-signed certificate for localhost, 127.0.0.1 and ::1, the way the
 * platform serves its Integration API: for local HTTPS fakes and TLS tests. It calls the `openssl`
 * command, which Node does not replace: node:crypto makes keys but not X.509 certificates.
 */
export async function createSelfSignedCertificate(): Promise<SelfSignedCertificate> {
  const folder = await mkdtemp(join(tmpdir(), "platform-integration-tls-"));
  const keyFile = join(folder, "key.pem");
  const certFile = join(folder, "cert.pem");
  try {
    await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ]);
    return { key: await readFile(keyFile, "utf8"), cert: await readFile(certFile, "utf8") };
  } catch (error) {
    throw new Error(
      "Could not generate a self-signed certificate with the openssl command: install OpenSSL, or pass a certificate and key of your own.",
      { cause: error },
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
