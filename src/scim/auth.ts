// Who may call the SCIM server: a bearer token compared in constant time, or the application's own
// `authenticate` function. There is no open default: createScimHandler throws without either.
import { sameDigest, sha256 } from "../internal/sha256.ts";
import type { GuardedRequest } from "../provisioning/types.ts";

/**
 * Decides whether a request may use the SCIM server: true lets it through, false answers 401.
 * It sees the headers as a record by lowercase name.
 */
export type ScimAuthenticate = (request: GuardedRequest) => boolean | Promise<boolean>;

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
 * @throws TypeError for an empty token, or one holding whitespace (a token read from a file with
 * its newline): no Authorization header can carry it, so every request would answer 401.
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
