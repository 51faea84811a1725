/**
 * Whether an error's code or message says that the server's certificate did not verify, as Node,
 * Bun and Deno name it (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE,
 * CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, UnknownIssuer...): retrying cannot fix it, a
 * trusted CA can.
 */
export function isCertificateProblem(codeOrMessage: string): boolean {
  return /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|UnknownIssuer|ALTNAME/i.test(
    codeOrMessage,
  );
}
