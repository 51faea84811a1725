// A transform for createProvisioningHandler that hashes clear-text passwords with node:crypto's
// scrypt before they reach the store, and a check of a sign-in attempt against the stored hash.
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import type { UserPatch, UserRecord } from "platform-integration/provisioning";

/** The `passwordFormat` the transform stores with each hash. */
export const scryptFormat = "scrypt";

// The platform documents no values of password_format, only that it says how the password is
// encoded: absent (or one of these) means clear text. Any other format was hashed by the directory
// and is stored as sent.
const clearTextFormats = new Set(["", "plain", "plaintext", "clear", "cleartext", "clear_text"]);
const cost = { N: 2 ** 14, r: 8, p: 1 } as const;
const keyLength = 32;

function deriveKey(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, keyLength, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/**
 * Replaces a clear-text password in a create or modify with its scrypt hash
 * (`scrypt$N$r$p$salt$key`, base64url) and sets `passwordFormat` to "scrypt". A patch without a
 * password, or with one the directory already hashed, passes unchanged. A redelivered message
 * gets a new salt, and its hash verifies the same password.
 */
export async function hashClearTextPassword(patch: UserPatch): Promise<UserPatch> {
  const { password, passwordFormat } = patch;
  if (typeof password !== "string") return patch;
  if (typeof passwordFormat === "string" && !clearTextFormats.has(passwordFormat.toLowerCase())) {
    return patch;
  }
  const salt = randomBytes(16);
  const key = await deriveKey(password, salt, cost);
  const hash = [
    scryptFormat,
    cost.N,
    cost.r,
    cost.p,
    salt.toString("base64url"),
    key.toString("base64url"),
  ];
  return { ...patch, password: hash.join("$"), passwordFormat: scryptFormat };
}

/** Whether `candidate` is the password of a user stored through {@link hashClearTextPassword}. */
export async function verifyPassword(user: UserRecord, candidate: string): Promise<boolean> {
  if (user.passwordFormat !== scryptFormat || user.password === undefined) return false;
  const [format, N, r, p, salt, key] = user.password.split("$");
  if (format !== scryptFormat || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, "base64url");
  const actual = await deriveKey(candidate, Buffer.from(salt, "base64url"), {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
