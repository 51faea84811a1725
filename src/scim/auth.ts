// Who may call the SCIM server: a bearer token compared in constant time, or the application's own
// `authenticate` function. There is no open default: createScimHandler throws without either.
import { sameDigest, sha256 } from "../internal/sha256.ts";
import type { GuardedRequest } from "../provisioning/types.ts";

/**
 * Decides whether a request may use the SCIM server: only `true` (or a promise of `true`) lets it
 * through; anything else answers 401, including values that merely look true (`"false"`, `"no"`,
 * an object such as `{ valid: false }`, an array), so a check that returns the wrong type fails
 * closed. It sees the headers as a record by lowercase name. One that throws answers 500 (a
 * `ScimError` thrown chooses the answer).
 */
export type ScimAuthenticate = (request: GuardedRequest) => boolean | Promise<boolean>;

// The fewest characters a SCIM token may have: it is all that stands between the network and user
// provisioning, and nothing limits the rate of wrong guesses. `openssl rand -hex 32` makes 64.
const minimumTokenLength = 16;

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), or undefined. */
export function bearerTokenOf(header: unknown): string | undefined {
  if (typeof header !== "string") return undefined;
  const match = /^\s*bearer[ \t]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * An {@link ScimAuthenticate} accepting `Authorization: Bearer <token>` for exactly `token`. Both
 * are hashed with SHA-256 and the digests compared without an early exit, so the time taken says
 * nothing of where they differ, nor of the token's length.
 *
 * @throws TypeError for an empty token, one holding whitespace (a token read from a file with
 * its newline: no Authorization header can carry it, so every request would answer 401), one
 * holding a character outside printable ASCII (a header carries its UTF-8 bytes, read back as
 * Latin-1: 401 for ever too), or one shorter than 16 characters (guessable: make one with `openssl rand -hex 32`).
 */
export function bearerToken(token: string): ScimAuthenticate {
  if (typeof token !== "string" || token.trim() === "") {
    throw new TypeError("createScimHandler: token must be a non-empty string");
  }
  if (/\s/.test(token)) {
    throw new TypeError(
      "createScimHandler: token holds whitespace (a newline read from a file?), which no Authorization header can carry: trim it",
    );
  }
  if (!/^[\x21-\x7e]+$/.test(token)) {
    // Node reads header bytes as Latin-1 and fetch refuses to send such a header: a token outside
    // printable ASCII would be refused 401 for ever.
    throw new TypeError(
      "createScimHandler: token holds a character outside printable ASCII, which no Authorization header carries as written: make one with `openssl rand -hex 32`",
    );
  }
  if (token.length < minimumTokenLength) {
    // The length only: the token itself is a secret and never goes into an error.
    throw new TypeError(
      `createScimHandler: token has ${token.length} characters; a SCIM token needs at least ${minimumTokenLength} (anyone could guess a shorter one): make one with \`openssl rand -hex 32\``,
    );
  }
  const expected = sha256(token);
  return (request) => {
    const given = bearerTokenOf(request.headers.authorization);
    if (given === undefined) return false;
    const got = sha256(given);
    // Synchronous where node:crypto is reachable (both digests are then arrays), else awaited.
    if (expected instanceof Uint8Array && got instanceof Uint8Array) {
      return sameDigest(expected, got);
    }
    return Promise.all([expected, got]).then(([want, digest]) => sameDigest(want, digest));
  };
}
