// The doctor's checks below HTTP: the host name, the port and the TLS certificate, with the fix for
// each failure.
import type { X509Certificate } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP, connect as tcpConnect } from "node:net";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { type CheckResult, describeError, errorCode, result } from "./check.ts";

/** Where the platform's API listens, from its base URL. */
export interface Endpoint {
  /** The URL's host name or address, without IPv6 brackets. */
  host: string;
  port: number;
  https: boolean;
  /** How fixes name the API expected there: the Integration API, or the newer SDK service. */
  title: string;
}

/** The host, port and scheme of a base URL, with the scheme's default port when none is given. */
export function endpointOf(url: URL, title = "the Integration API"): Endpoint {
  const https = url.protocol === "https:";
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
    https,
    title,
  };
}

/** What the probes share: a time limit per probe and the command's Ctrl-C. */
export interface ProbeOptions {
  timeoutMs: number;
  signal: AbortSignal;
}

/** Resolves the host as the SDK's requests will (getaddrinfo, so /etc/hosts counts too). */
export async function checkDns(
  endpoint: Endpoint,
  { timeoutMs, signal }: ProbeOptions,
): Promise<{ result: CheckResult; address?: string }> {
  const title = "Host name resolves";
  if (isIP(endpoint.host) !== 0) {
    return {
      result: result("dns", title, "pass", `${endpoint.host} is an address: nothing to resolve`),
      address: endpoint.host,
    };
  }
  try {
    const addresses = await withTimeout(lookup(endpoint.host, { all: true }), timeoutMs, signal);
    const list = addresses.map((entry) => entry.address);
    return {
      result: result("dns", title, "pass", `${endpoint.host} resolves to ${list.join(", ")}`, {
        details: { addresses: list },
      }),
      ...(list[0] === undefined ? {} : { address: list[0] }),
    };
  } catch (error) {
    const timedOut = error instanceof ProbeTimeout;
    return {
      result: result(
        "dns",
        title,
        "fail",
        timedOut
          ? `no answer for ${endpoint.host} within ${timeoutMs} ms`
          : `${endpoint.host} does not resolve (${errorCode(error) ?? describeError(error)})`,
        {
          fix: `Check the host name in the URL and this container's DNS settings (/etc/resolv.conf): ${endpoint.host} must resolve from where the application runs.`,
        },
      ),
    };
  }
}

/** Opens (and closes) a TCP connection to the API's port. */
export async function checkTcp(
  endpoint: Endpoint,
  address: string,
  { timeoutMs, signal }: ProbeOptions,
): Promise<CheckResult> {
  const title = "Port is reachable";
  const where = `${address}:${endpoint.port}`;
  const started = performance.now();
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        const socket = tcpConnect({ host: address, port: endpoint.port });
        socket.once("connect", () => {
          socket.destroy();
          resolve();
        });
        socket.once("error", reject);
        signal.addEventListener("abort", () => socket.destroy(), { once: true });
        // Bounded by withTimeout; the socket must not outlive the probe either way.
        setTimeout(() => socket.destroy(), timeoutMs).unref();
      }),
      timeoutMs,
      signal,
    );
    const ms = Math.round(performance.now() - started);
    return result("tcp", title, "pass", `connected to ${where} in ${ms} ms`);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ECONNREFUSED") {
      return result("tcp", title, "fail", `connection to ${where} refused: nothing listens there`, {
        fix: `Check the port in the URL (${endpoint.port}) and that ${endpoint.title} is running on ${endpoint.host}.`,
      });
    }
    const what =
      error instanceof ProbeTimeout
        ? `no answer from ${where} within ${timeoutMs} ms`
        : `cannot connect to ${where} (${code ?? describeError(error)})`;
    return result("tcp", title, "fail", what, {
      fix: `A firewall or network policy may drop the traffic: ${where} must be reachable from this container.`,
    });
  }
}

/** The facts of a certificate that a person compares with the platform's. */
export interface CertificateFacts {
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  /** SHA-256 of the DER certificate, as colon-separated hex pairs. */
  fingerprint256: string;
  selfSigned: boolean;
  subjectAltName: string | undefined;
  /** The certificate in PEM, to pass as `tls.ca` once its fingerprint has been compared. */
  pem: string;
}

/** What to trust, named by the SDK's option. */
export interface TrustSettings {
  /** The PEM text of `--ca`, and the file it came from. */
  ca?: { pem: string; file: string } | undefined;
  /** `--insecure`: accept any certificate, as `tls: { rejectUnauthorized: false }`. */
  insecure: boolean;
}

/**
 * Shakes hands with the API without verifying, to show the certificate it presents, then judges
 * that certificate as the SDK would with the same `tls` settings.
 */
export async function checkTls(
  endpoint: Endpoint,
  address: string,
  trust: TrustSettings,
  { timeoutMs, signal }: ProbeOptions,
): Promise<CheckResult> {
  const title = "TLS certificate is trusted";
  const where = `${endpoint.host}:${endpoint.port}`;
  let socket: TLSSocket | undefined;
  try {
    socket = await withTimeout(
      new Promise<TLSSocket>((resolve, reject) => {
        const connection = tlsConnect({
          host: address,
          port: endpoint.port,
          // Node checks the certificate against `servername`, else `host` (here an address).
          ...(isIP(endpoint.host) === 0 ? { servername: endpoint.host } : {}),
          ...(trust.ca === undefined ? {} : { ca: trust.ca.pem }),
          rejectUnauthorized: false,
        });
        connection.once("secureConnect", () => resolve(connection));
        connection.once("error", reject);
        signal.addEventListener("abort", () => connection.destroy(), { once: true });
        setTimeout(() => connection.destroy(), timeoutMs).unref();
      }),
      timeoutMs,
      signal,
    );
  } catch (error) {
    socket?.destroy();
    return result(
      "tls",
      title,
      "fail",
      error instanceof ProbeTimeout
        ? `no TLS handshake with ${where} within ${timeoutMs} ms`
        : `TLS handshake with ${where} failed (${describeError(error)})`,
      {
        fix: "The server may not speak TLS on this port: if it serves plain HTTP, the URL must start with http://.",
      },
    );
  }
  const peer = socket.getPeerX509Certificate();
  const authorizationError =
    socket.authorizationError === null ? undefined : String(socket.authorizationError);
  socket.destroy();
  if (peer === undefined) {
    return result("tls", title, "fail", `${where} presented no certificate`, {
      fix: `Check that the URL names ${endpoint.title}: it serves a certificate on every connection.`,
    });
  }
  const certificate = factsOf(peer);
  const details = { certificate, authorizationError: authorizationError ?? null };
  const described = `${certificate.selfSigned ? "self-signed " : ""}${certificate.subject} (SHA-256 ${certificate.fingerprint256}, valid ${certificate.validFrom} to ${certificate.validTo})`;
  const caOption =
    trust.ca === undefined ? undefined : `tls: { ca: readFileSync("${trust.ca.file}", "utf8") }`;

  if (authorizationError === undefined) {
    const by = caOption === undefined ? "the runtime's certificate authorities" : caOption;
    return result("tls", title, "pass", `${described}, trusted by ${by}`, {
      details: { ...details, trustedBy: by },
    });
  }
  const reason = explainAuthorizationError(authorizationError, certificate, endpoint.host);
  if (trust.insecure) {
    return result(
      "tls",
      title,
      "warn",
      `${described} NOT verified (--insecure, as tls: { rejectUnauthorized: false }): ${reason.problem}`,
      {
        fix: `Verify instead, as --insecure also accepts an attacker's certificate: ${reason.trust ?? reason.fix}`,
        details,
      },
    );
  }
  const against = trust.ca === undefined ? "" : ` with --ca ${trust.ca.file}`;
  return result("tls", title, "fail", `${described}${against}: ${reason.problem}`, {
    fix: reason.fix,
    details,
  });
}

function factsOf(certificate: X509Certificate): CertificateFacts {
  return {
    subject: certificate.subject.replaceAll("\n", ", "),
    issuer: certificate.issuer.replaceAll("\n", ", "),
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
    fingerprint256: certificate.fingerprint256,
    selfSigned: certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey),
    subjectAltName: certificate.subjectAltName,
    pem: certificate.toString(),
  };
}

/** The problem and its one-line fix for OpenSSL's and Node's verification codes. */
function explainAuthorizationError(
  code: string,
  certificate: CertificateFacts,
  host: string,
): { problem: string; fix: string; trust?: string } {
  const compare = `after comparing its SHA-256 fingerprint with the platform's (doctor --json prints the PEM)`;
  switch (code) {
    case "CERT_HAS_EXPIRED":
    case "CERT_NOT_YET_VALID":
      return {
        problem: `the certificate is not valid now (${code}); this machine's time is ${new Date().toISOString()}`,
        fix: "Renew the platform's certificate, or correct this machine's clock if it is wrong.",
      };
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return {
        problem: `the certificate does not name ${host} (it names ${certificate.subjectAltName ?? certificate.subject})`,
        fix: "Use a host name the certificate names in the URL, or have the platform's certificate reissued for this name.",
      };
    default:
      if (certificate.selfSigned) {
        const trust = `trust this certificate with tls: { ca: <its PEM> } ${compare}.`;
        return {
          problem: `not trusted (${code})`,
          fix: `Either ${trust.slice(0, -1)}, or skip verification with tls: { rejectUnauthorized: false }, which also accepts an attacker's.`,
          trust,
        };
      }
      return {
        problem: `issued by ${certificate.issuer}, which is not trusted (${code})`,
        fix: `Trust the authority that issued it with tls: { ca: <the PEM of ${certificate.issuer}> }, or set NODE_EXTRA_CA_CERTS to a file that holds it.`,
      };
  }
}

/** Thrown by {@link withTimeout} when the time is up. */
export class ProbeTimeout extends Error {}

/** `promise`, or a ProbeTimeout after `timeoutMs`, or the signal's reason on abort. */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ProbeTimeout()), timeoutMs);
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    });
  });
}
