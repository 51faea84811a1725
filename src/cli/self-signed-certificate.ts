/** A PEM private key and the certificate that it signed for itself. */
export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const day = 24 * 60 * 60 * 1000;

/**
 * Generates a short-lived self-signed certificate for localhost, 127.0.0.1 and ::1, the way the
 * platform serves its Integration API: for local HTTPS fakes and TLS tests. The key and the
 * signature come from WebCrypto (ECDSA P-256, the same on Node, Bun and Deno, without an `openssl`
 * command); the certificate around them is one fixed X.509 v3 structure, written in DER below.
 * Like `openssl req -x509`, it is its own CA (basicConstraints CA:TRUE), so that clients can trust
 * it as `tls.ca`.
 */
export async function createSelfSignedCertificate(): Promise<SelfSignedCertificate> {
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const now = Date.now();
  const name = sequence(set(sequence(oid("2.5.4.3"), utf8String("localhost"))));
  const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"));
  const tbs = sequence(
    explicit(0, integer(Uint8Array.of(2))), // v3
    integer(serialNumber()),
    ecdsaWithSha256,
    name,
    sequence(
      // A minute back, so that a clock a little behind the client's does not make it "not yet valid".
      utcTime(new Date(now - 60_000)),
      utcTime(new Date(now + 2 * day)),
    ),
    name,
    new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey)),
    explicit(
      3,
      sequence(
        extension("2.5.29.19", true, sequence(boolean(true))), // basicConstraints: CA
        // keyUsage: digitalSignature (bit 0) and keyCertSign (bit 5); the two bits after unused.
        extension("2.5.29.15", true, tlv(0x03, Uint8Array.of(2, 0b1000_0100))),
        extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))), // serverAuth
        extension(
          "2.5.29.17", // subjectAltName: dNSName [2], iPAddress [7]
          false,
          sequence(
            tlv(0x82, new TextEncoder().encode("localhost")),
            tlv(0x87, Uint8Array.of(127, 0, 0, 1)),
            tlv(0x87, Uint8Array.of(...new Array(15).fill(0), 1)),
          ),
        ),
      ),
    ),
  );
  // WebCrypto signs as r || s; X.509 wants SEQUENCE { INTEGER r, INTEGER s }.
  const raw = new Uint8Array(await crypto.subtle.sign(algorithm, keys.privateKey, tbs));
  const signature = sequence(integer(raw.subarray(0, 32)), integer(raw.subarray(32)));
  const certificate = sequence(
    tbs,
    ecdsaWithSha256,
    tlv(0x03, concat(Uint8Array.of(0), signature)),
  );
  const privateKey = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { key: pem(privateKey, "PRIVATE KEY"), cert: pem(certificate, "CERTIFICATE") };
}

/** One DER element: tag, definite length (short or long form), contents. */
export function tlv(tag: number, contents: Uint8Array): Uint8Array {
  const length = contents.length;
  const lengthBytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest % 256);
  const header = length < 0x80 ? [length] : [0x80 | lengthBytes.length, ...lengthBytes];
  return concat(Uint8Array.of(tag, ...header), contents);
}

const sequence = (...items: Uint8Array[]) => tlv(0x30, concat(...items));
const set = (...items: Uint8Array[]) => tlv(0x31, concat(...items));
const explicit = (tag: number, inner: Uint8Array) => tlv(0xa0 | tag, inner);
const boolean = (value: boolean) => tlv(0x01, Uint8Array.of(value ? 0xff : 0));
const utf8String = (text: string) => tlv(0x0c, new TextEncoder().encode(text));

/** A non-negative INTEGER from big-endian bytes: minimal, with a 0 byte where the top bit is set. */
export function integer(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, (trimmed[0] ?? 0) >= 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed);
}

/** An OBJECT IDENTIFIER from its dotted form: 40·first + second, then base-128 arcs. */
export function oid(dotted: string): Uint8Array {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes: number[] = [];
  for (const arc of [40 * first + second, ...rest]) {
    const groups = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) {
      groups.unshift(0x80 | (value & 0x7f));
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Uint8Array.from(bytes));
}

/** UTCTime, YYMMDDHHMMSSZ: the form RFC 5280 requires for dates before 2050. */
function utcTime(date: Date): Uint8Array {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return tlv(0x17, new TextEncoder().encode(`${text}Z`));
}

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), tlv(0x04, value));
}

/** 16 random bytes, positive and without a leading zero byte (RFC 5280: at most 20 octets). */
function serialNumber(): Uint8Array {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function pem(der: Uint8Array, label: string): string {
  const base64 = btoa(String.fromCharCode(...der));
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
