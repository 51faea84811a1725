import type { LicenseSignature, LicenseValue } from "./license-record.ts";
import { valueTypeProblem } from "./value-type.ts";

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
  /**
   * The declared type (`"Integer"`, `"Boolean"`, `"String"`...), as the service's raw JSON
   * names it; a value of another JSON type is `"invalid"`.
   */
  valueType?: string | undefined;
  /** The declared type, as the clients' records name it (`type`); `valueType` wins. */
  type?: string | undefined;
}

/**
 * Checks a license field's signature against the application's public key: `"valid"` when the
 * vendor signed this value's text, `"invalid"` when it did not (a changed value, another key, a
 * malformed signature), when the value's JSON type is not the one its `valueType` (or `type`)
 * declares (`Boolean`, `Integer`, `String`, `Text`, `Enum`, in any case; an absent or other type
 * is not checked: check it yourself), or when a string value is not well-formed UTF-16 (a lone
 * surrogate, which would encode as the text of U+FFFD), `"unsigned"` when the field carries no signature (the Integration API and the admin
 * console's endpoint never sign). Where a field has both, the v2 signature decides.
 *
 * What a `"valid"` proves, exactly: the vendor signed this value's text for some field of some
 * license of the application. The field's name, its type and the license are not signed, so
 * another field's or another customer's signature of the same text verifies too (a `seat_count`
 * of 1000 copied from another license; the `<nil>` signature of any empty field put onto
 * `expires_at`). Bind the value to its field in the application: ask for the field by name,
 * pass its `type` (checked here), check the value's JSON type yourself (an Integer may hold
 * `""`, which the signature of any empty field covers), and never read an empty or absent value
 * as "unlimited" unless that field is meant to have none (README: "What a signature proves").
 *
 * Read the field through a client pinned to `api: "sdk"`, and treat every verdict but
 * `"valid"` as a failure: under `"auto"` the cluster (a tampered service, a
 * PLATFORM_INTEGRATIONAPI set in the pod) can choose the Integration API, which signs nothing,
 * so a check gated on `capabilities.signedLicenseFields` is skipped at the attacker's choice.
 *
 * The signed bytes are the value's plain text as the vendor's Go code prints it: a string as is,
 * an integer in decimal, `true`/`false`, `<nil>` for a field without a value. v2 is RSA-PSS with
 * SHA-256, v1 (older licenses) RSA-PSS with MD5, both verified with any salt length, as the
 * vendor's own check does, through `node:crypto` (Node, Bun and Deno). Where a runtime has no
 * `node:crypto` (Workers), v2 falls back to WebCrypto, which needs the salt length: the lengths
 * the vendor's tooling produces are tried (the maximum, and the digest's length), so a v2
 * signature with another salt reads `"invalid"` there, and v1 throws (WebCrypto has no MD5).
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
 * const license = createLicenseClient({ api: "sdk" }); // pinned: never "auto" to verify
 * const seats = await license.field("seat_count");
 * if (
 *   seats === undefined ||
 *   seats.type !== "Integer" ||
 *   typeof seats.value !== "number" ||
 *   (await verifyLicenseField(seats, APP_PUBLIC_KEY)) !== "valid"
 * ) {
 *   throw new Error("The license's seat count is missing or not signed by the vendor.");
 * }
 * ```
 */
export async function verifyLicenseField(
  field: SignedLicenseField,
  publicKeyPem: string,
): Promise<LicenseFieldVerdict> {
  const spki = spkiOf(publicKeyPem);
  const nodeCrypto = await loadNodeCrypto();
  const verifier =
    nodeCrypto === undefined
      ? await webCryptoVerifier(spki)
      : nodeVerifier(nodeCrypto, publicKeyPem);
  const { v1, v2 } = field.signature ?? {};
  const version = nonEmpty(v2) ? "v2" : nonEmpty(v1) ? "v1" : undefined;
  if (version === undefined) return "unsigned";
  if (valueTypeProblem(field.value, field.valueType ?? field.type) !== undefined) return "invalid";
  // A lone surrogate encodes as U+FFFD, so it would verify with the signature of that text.
  if (typeof field.value === "string" && !isWellFormed(field.value)) return "invalid";
  const signature = base64Bytes((version === "v2" ? v2 : v1) as string);
  if (signature === undefined) return "invalid";
  const message = new TextEncoder().encode(signedText(field.value));
  try {
    return (await verifier(version === "v2" ? "sha256" : "md5", message, signature))
      ? "valid"
      : "invalid";
  } catch (error) {
    if (error instanceof NoMd5Error) throw error;
    return "invalid";
  }
}

type Verifier = (
  hash: "sha256" | "md5",
  message: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
) => Promise<boolean> | boolean;

let nodeCryptoModule: Promise<typeof import("node:crypto") | undefined> | undefined;

/** node:crypto where the runtime has it (Node, Bun, Deno), loaded once; undefined elsewhere. */
function loadNodeCrypto() {
  nodeCryptoModule ??= (async () => {
    // Inside try, so that bundlers for the browser and Workers leave the import to the runtime.
    try {
      const module = await import("node:crypto");
      return typeof module.verify === "function" ? module : undefined;
    } catch {
      return undefined;
    }
  })();
  return nodeCryptoModule;
}

/** RSA-PSS with the salt length detected from the signature, as the vendor's Go code verifies. */
function nodeVerifier(nodeCrypto: typeof import("node:crypto"), publicKeyPem: string): Verifier {
  const { constants, createPublicKey, verify } = nodeCrypto;
  let key: import("node:crypto").KeyObject;
  try {
    key = createPublicKey(publicKeyPem);
  } catch (error) {
    throw new TypeError(`publicKeyPem is not an RSA public key: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== "rsa") {
    throw new TypeError(
      `publicKeyPem is not an RSA public key: it is a ${String(key.asymmetricKeyType)} key.`,
    );
  }
  const options = {
    key,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_AUTO,
  };
  return (hash, message, signature) => verify(hash, message, options, signature);
}

class NoMd5Error extends Error {}

/**

 * WebCrypto, where node:crypto is missing: it needs the salt length, so the ones the vendor's
 * tooling produces are tried (the maximum, which its Go code signs with, and the digest's length,
 * OpenSSL's default); it has no MD5, so v1 cannot be checked.
 */
export async function webCryptoVerifier(spki: Uint8Array<ArrayBuffer>): Promise<Verifier> {
  let key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  try {
    key = await crypto.subtle.importKey("spki", spki, { name: "RSA-PSS", hash: "SHA-256" }, false, [
      "verify",
    ]);
  } catch (error) {
    throw new TypeError(`publicKeyPem is not an RSA public key: ${(error as Error).message}`);
  }
  const modulusBits = (key.algorithm as unknown as { modulusLength: number }).modulusLength;
  const maximum = Math.ceil((modulusBits - 1) / 8) - sha256Bytes - 2;
  return async (hash, message, signature) => {
    if (hash === "md5") {
      throw new NoMd5Error(
        "A v1 license signature (RSA-PSS with MD5) needs node:crypto, which this runtime lacks; WebCrypto has no MD5.",
      );
    }
    for (const saltLength of [maximum, sha256Bytes]) {
      if (await crypto.subtle.verify({ name: "RSA-PSS", saltLength }, key, signature, message)) {
        return true;
      }
    }
    return false;
  };
}

const sha256Bytes = 32;

/** The value as Go's fmt.Sprint prints it, which is what the vendor signs. */
export function signedText(value: LicenseValue | undefined): string {
  if (value === undefined || value === null) return "<nil>";
  return String(value);
}

function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  // Unicode-aware: a surrogate class matches only an unpaired half.
  return typeof native === "function" ? native.call(text) : !/\p{Surrogate}/u.test(text);
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
