import type { LicenseSignature, LicenseValue } from "./license-records.ts";

/** What {@link verifyLicenseField} concludes. */
export type LicenseFieldVerdict = "valid" | "invalid" | "unsigned";

/**
 * A license field with its signatures: what `license.field(name)` and the fields of
 * `license.license()` give on the newer API, or the service's raw field JSON.
 */
export interface SignedLicenseField {
  /** The value; absent or null when the field has none (it then signs as `<nil>`). */
  value?: LicenseValue | undefined;
  /** Base64 signatures; a field without any is `"unsigned"`. */
  signature?: LicenseSignature | undefined;
}

const saltMarginBytes = 2;
const sha256Bytes = 32;

/**
 * Checks a license field's signature against the application's public key, so that a value the
 * application enforces (a seat count, an expiry) cannot be changed in the cluster: `"valid"`
 * when the signature verifies, `"invalid"` when it does not (a changed value, another key, a
 * malformed signature), `"unsigned"` when the field carries none (the Integration API and the
 * admin console's endpoint never sign). Where a field has both, the v2 signature decides.
 *
 * The signed bytes are the value's plain text as the vendor's Go code prints it: a string as is,
 * an integer in decimal, `true`/`false`, `<nil>` for a field without a value. v2 is RSA-PSS with
 * SHA-256 and the maximum salt length, checked with WebCrypto; v1 (older licenses) is RSA-PSS
 * with MD5, which WebCrypto lacks, checked with `node:crypto` (Node, Bun and Deno have it).
 * Integers above 2^53 do not survive JSON as numbers, so they cannot verify.
 *
 * @param publicKeyPem The application's RSA public key (PEM, `-----BEGIN PUBLIC KEY-----`),
 * from the Vendor Portal's "Replicated SDK Signature Verification" settings; ship it with the
 * application, never read it from the cluster.
 * @throws TypeError when `publicKeyPem` is not an RSA public key in PEM.
 *
 * @example
 * ```ts
 * import { createLicenseClient, verifyLicenseField } from "platform-integration/license";
 *
 * const license = createLicenseClient({ api: "sdk" });
 * const seats = await license.field("seat_count");
 * if (seats === undefined || (await verifyLicenseField(seats, APP_PUBLIC_KEY)) !== "valid") {
 *   throw new Error("The license's seat count is missing or not signed by the vendor.");
 * }
 * ```
 */
export async function verifyLicenseField(
  field: SignedLicenseField,
  publicKeyPem: string,
): Promise<LicenseFieldVerdict> {
  const spki = spkiOf(publicKeyPem);
  let key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  try {
    key = await crypto.subtle.importKey("spki", spki, { name: "RSA-PSS", hash: "SHA-256" }, false, [
      "verify",
    ]);
  } catch (error) {
    throw new TypeError(`publicKeyPem is not an RSA public key: ${(error as Error).message}`);
  }
  const { v1, v2 } = field.signature ?? {};
  const version = nonEmpty(v2) ? "v2" : nonEmpty(v1) ? "v1" : undefined;
  if (version === undefined) return "unsigned";
  const signature = base64Bytes((version === "v2" ? v2 : v1) as string);
  if (signature === undefined) return "invalid";
  const message = new TextEncoder().encode(signedText(field.value));
  if (version === "v2") {
    const modulusBits = (key.algorithm as unknown as { modulusLength: number }).modulusLength;
    const saltLength = Math.ceil((modulusBits - 1) / 8) - sha256Bytes - saltMarginBytes;
    try {
      return (await crypto.subtle.verify({ name: "RSA-PSS", saltLength }, key, signature, message))
        ? "valid"
        : "invalid";
    } catch {
      return "invalid";
    }
  }
  return verifyMd5Pss(publicKeyPem, message, signature);
}

/** v1: RSA-PSS with MD5 and MGF1-MD5, salt length detected as the vendor's own check does. */
async function verifyMd5Pss(
  publicKeyPem: string,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<LicenseFieldVerdict> {
  let nodeCrypto: typeof import("node:crypto");
  try {
    nodeCrypto = await import("node:crypto");
  } catch (error) {
    throw new Error(
      `A v1 license signature (RSA-PSS with MD5) needs node:crypto, which this runtime lacks (${(error as Error).message}); WebCrypto has no MD5.`,
    );
  }
  const { constants, verify } = nodeCrypto;
  try {
    const key = {
      key: publicKeyPem,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_AUTO,
    };
    return verify("md5", message, key, signature) ? "valid" : "invalid";
  } catch {
    return "invalid";
  }
}

/** The value as Go's fmt.Sprint prints it, which is what the vendor signs. */
export function signedText(value: LicenseValue | undefined): string {
  if (value === undefined || value === null) return "<nil>";
  return String(value);
}

function nonEmpty(value: string | undefined): value is string {
  return typeof value === "string" && value.trim() !== "";
}

function spkiOf(pem: string): Uint8Array<ArrayBuffer> {
  const match =
    typeof pem === "string"
      ? /-----BEGIN PUBLIC KEY-----([\s\S]+?)-----END PUBLIC KEY-----/.exec(pem)
      : null;
  const der = match?.[1] === undefined ? undefined : base64Bytes(match[1]);
  if (der === undefined) {
    throw new TypeError(
      "publicKeyPem must be the application's RSA public key in PEM (-----BEGIN PUBLIC KEY-----...), from the Vendor Portal.",
    );
  }
  return der;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  const compact = text.replace(/\s+/g, "");
  if (compact === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return undefined;
  try {
    const binary = atob(compact);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}
