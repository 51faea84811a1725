// SHA-256 of a string for the constant-time comparisons of secrets (the SCIM bearer token, the
// Provisioning API's shared secret): synchronous through node:crypto where the runtime has it
// (Node 22.13+, Bun, Deno reach it by process.getBuiltinModule), else Web Crypto's digest, which
// goes through a thread pool and made a token check cost more than the request it guards.
import type * as NodeCrypto from "node:crypto";

type CreateHash = typeof NodeCrypto.createHash;

const encoder = new TextEncoder();

const createHash: CreateHash | undefined = (() => {
  const node = (
    globalThis as {
      process?: { getBuiltinModule?: (id: "node:crypto") => typeof NodeCrypto | undefined };
    }
  ).process;
  try {
    const hash = node?.getBuiltinModule?.("node:crypto")?.createHash;
    return typeof hash === "function" ? hash : undefined;
  } catch {
    return undefined;
  }
})();

/** The SHA-256 digest of `text` (UTF-8): at once where node:crypto is reachable, else a promise. */
export function sha256(text: string): Uint8Array | Promise<Uint8Array> {
  if (createHash !== undefined) {
    return new Uint8Array(createHash("sha256").update(text, "utf8").digest());
  }
  return crypto.subtle
    .digest("SHA-256", encoder.encode(text))
    .then((digest) => new Uint8Array(digest));
}

/** Whether two digests of one length are equal, compared without an early exit. */
export function sameDigest(want: Uint8Array, got: Uint8Array): boolean {
  let difference = want.length ^ got.length;
  for (let index = 0; index < want.length; index++) {
    difference |= (want[index] as number) ^ (got[index] as number);
  }
  return difference === 0;
}
