// What an LDAP failure means for the sync: the result codes (RFC 4511) that retrying cannot
// change, the fix for each, and the translation of an ldapts error into a DirectoryError, fatal
// or not. The one home of the result codes the LDAP room reads.
import type { ConnectionOptions } from "node:tls";
import { isCertificateProblem } from "../internal/certificate-problem.ts";
import { redactUrl } from "../internal/url.ts";
import { DirectoryError } from "../sync/source.ts";

/** LDAP result codes (RFC 4511) that the sync tells apart. */
export const resultCode = {
  sizeLimitExceeded: 4,
  unavailableCriticalExtension: 12,
  noSuchObject: 32,
  adminLimitExceeded: 11,
  insufficientAccessRights: 50,
} as const;

/** A search over the account's limits: retrying meets the same limit. */
export function isOverLimit(code: unknown): boolean {
  return code === resultCode.sizeLimitExceeded || code === resultCode.adminLimitExceeded;
}

// Result codes that retrying cannot change: the configuration or the account must be fixed.
const fatalCodes = new Map<number, string>([
  [7, "the server does not support this bind method"],
  [8, "the server requires a stronger authentication: use ldaps:// or startTls"],
  [12, "the server does not support the paged results control (RFC 2696)"],
  [13, "the server requires confidentiality: use ldaps:// or startTls"],
  [32, "the base DN does not exist: check --base-dn"],
  [34, "a DN is malformed: check --base-dn and --bind-dn"],
  [48, "the server refused this kind of authentication"],
  [49, "the bind DN or its password was refused: check them"],
  [50, "the bind account may not read these entries: grant it read access"],
]);

/** The fix for a paged read over the bind account's size limit, for each kind of directory. */
export const sizeLimitFix =
  "the bind account is held to a size limit below the number of entries the filter matches: " +
  'lift it for the account (OpenLDAP: limits dn.exact="<bind DN>" size=unlimited, or ' +
  "olcLimits in cn=config; 389 Directory Server: nsSizeLimit: -1 on the bind entry; " +
  "Active Directory: MaxPageSize in the LDAP policy, or a smaller --page-size)";

/**
 * An error of the connection as the source throws it: fatal, with its fix, where retrying cannot
 * help; `connectedOnce` tells a TLS handshake broken off on the first connection (the
 * configuration) from one broken off later (a restart, retried next cycle).
 */
export function toDirectoryError(
  error: unknown,
  ldap: { url: string; tls?: ConnectionOptions },
  connectedOnce: boolean,
): DirectoryError {
  if (error instanceof DirectoryError) return error;
  const url = redactUrl(ldap.url);
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  const fatal = (why: string) =>
    new DirectoryError(`LDAP ${url}: ${why}`, { fatal: true, cause: error });
  if (typeof code === "number" && fatalCodes.has(code)) {
    return fatal(`${fatalCodes.get(code)} (${text})`);
  }
  // A paged read is held to the account's size limit too (slapd's size.prtotal, 389's
  // nsSizeLimit): it stops at the same entry every time.
  if (isOverLimit(code)) {
    return fatal(`${sizeLimitFix} (LDAP result ${code}: ${text.replace(/ Code: 0x\w+$/, "")})`);
  }
  if (typeof code === "string" && /ALTNAME/i.test(code)) {
    const host = new URL(url).hostname;
    return fatal(
      `the server's certificate does not name ${host} (${text}): connect by a name the ` +
        "certificate holds (its subjectAltName), or have the certificate reissued with this one",
    );
  }
  if (typeof code === "string" && isCertificateProblem(code)) {
    return fatal(
      ldap.tls?.ca === undefined
        ? `the server's certificate is not trusted (${code}): pass its CA (ldap.tls.ca, --ldap-ca FILE)`
        : `the server's certificate is not trusted (${code}): it was not issued by the CA given ` +
            "(ldap.tls.ca, --ldap-ca): pass the CA that issued it",
    );
  }
  // A TLS connection to a port that does not speak TLS: the server answers with plain LDAP (a
  // wrong version number) or hangs up during the handshake. On the first connection it is the
  // configuration; once connected, a hang-up may be a restart, which the next cycle retries.
  if (/wrong version number|packet length too long|unknown protocol/i.test(text)) {
    return fatal(
      `the port does not speak TLS (${text}): use ldaps:// with the LDAPS port (636), or ` +
        "ldap:// with startTls (--start-tls)",
    );
  }
  if (!connectedOnce && /before secure TLS connection was established/i.test(text)) {
    return fatal(
      `the server ended the TLS handshake (${text}): use ldaps:// with the LDAPS port (636), ` +
        "or ldap:// with startTls (--start-tls), and check that the server has a certificate",
    );
  }
  return new DirectoryError(`LDAP ${url}: ${text}`, { fatal: false, cause: error });
}
