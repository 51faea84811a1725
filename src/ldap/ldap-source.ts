import type { ConnectionOptions } from "node:tls";
import type { Client } from "ldapts";
import { isCertificateProblem } from "../internal/certificate-problem.ts";
import { redactUrl } from "../internal/url.ts";
import {
  type ChangeFeed,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
} from "../sync/source.ts";
import {
  addEntry,
  type DisabledAccounts,
  defaultFilter,
  type ReadPlan,
  readPlan,
  rootDseAttributes,
  type ServerProfile,
  serverProfile,
} from "./active-directory.ts";
import { createChangeFeed } from "./change-feed.ts";
import { createDirSyncFeed } from "./dirsync.ts";
import {
  attributesToRequest,
  bufferAttributeNames,
  type DirectoryMapping,
  toLdapEntry,
} from "./mapping.ts";

/** How to reach and authenticate to the directory. */
export interface LdapConnectionOptions {
  /** `ldap://host:389` or `ldaps://host:636`. */
  url: string;
  /** The DN of the account that reads the users; anonymous when absent. */
  bindDn?: string;
  /** Its password. Never logged, never put in an error message. */
  password?: string;
  /**
   * TLS options for `ldaps://` (and `startTls`): `{ ca }` to trust a private CA. Certificates are
   * checked by default; turning that off (`rejectUnauthorized: false`) is your explicit choice.
   */
  tls?: ConnectionOptions;
  /** Upgrades an `ldap://` connection with StartTLS before binding. */
  startTls?: boolean;
  /** How long one LDAP operation may take (default 60 s). */
  timeoutMs?: number;
}

/** What {@link createLdapSource} reads. */
export interface LdapSourceOptions {
  ldap: LdapConnectionOptions;
  baseDn: string;
  /**
   * Which entries are users. Absent: {@link defaultFilter}, or person user accounts on Active
   * Directory (its root DSE tells), its system accounts left out.
   */
  filter?: string | undefined;
  mapping: DirectoryMapping;
  /** The caller named no username attribute: `sAMAccountName` replaces the mapping's on AD. */
  defaultUsername?: boolean;
  /** What a disabled Active Directory account becomes (default `"keep"`). */
  disabledAccounts?: DisabledAccounts;
  /** Attributes that mapping functions of the caller's read. */
  attributes?: readonly string[];
  /** Attributes to read as bytes beside objectGUID, objectSid and mS-DS-ConsistencyGuid. */
  binaryAttributes?: readonly string[];
  passwords: boolean;
  /** Entries per page of the paged search (RFC 2696); default 500, below AD's MaxPageSize 1000. */
  pageSize?: number;
  /** Offers Content Sync (RFC 4533) for update cycles where the server has it (default off). */
  contentSync?: boolean;
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
// A search over the account's limits (RFC 4511): retrying meets the same limit.
const sizeLimitExceeded = 4;
const adminLimitExceeded = 11;

/**
 * The LDAP source of a directory sync: one connection, bound once, and a paged search (RFC
 * 2696, `pageSize` entries at a time) per read, so that memory holds two pages, whatever the
 * directory's size: the next page is read and mapped while this one is delivered.
 */
export function createLdapSource(options: LdapSourceOptions): DirectorySource {
  const { ldap, baseDn, mapping, passwords } = options;
  const filter = options.filter ?? defaultFilter;
  const attributes = attributesToRequest(mapping, {
    ...(options.attributes && { extra: options.attributes }),
    passwords,
  });
  const asBuffers = bufferAttributeNames(options.binaryAttributes);
  let client: Client | undefined;
  // What the root DSE said, read once: whether the server is Active Directory decides the reads.
  let profile: ServerProfile | undefined;
  let plan: ReadPlan | undefined;
  // Whether a connection ever succeeded: a TLS handshake the server breaks off on the first one
  // is the configuration (a plain port for ldaps://), later it may be a restart.
  let connectedOnce = false;
  if (ldap.startTls && /^ldaps:/i.test(ldap.url)) {
    throw new TypeError(
      `startTls upgrades an ldap:// connection; ${redactUrl(ldap.url)} is already LDAPS`,
    );
  }

  const connect = async (): Promise<Client> => {
    if (client?.isConnected && client.isBound) return client;
    await client?.unbind().catch(() => undefined);
    client = undefined;
    let ldapts: typeof import("ldapts");
    try {
      ldapts = await import("ldapts");
    } catch (error) {
      throw new DirectoryError(
        "The LDAP client is missing: install it next to platform-integration (npm install ldapts)",
        { fatal: true, cause: error },
      );
    }
    try {
      ldapts.FilterParser.parseString(filter);
    } catch (error) {
      throw new DirectoryError(`The filter ${filter} is invalid: ${(error as Error).message}`, {
        fatal: true,
        cause: error,
      });
    }
    // ldapts opens a TLS connection whenever it is given TLS options, whatever the URL: with
    // StartTLS they go to startTLS(), over the plain connection, and never to the constructor.
    const fresh = new ldapts.Client({
      url: ldap.url,
      timeout: ldap.timeoutMs ?? 60_000,
      connectTimeout: ldap.timeoutMs ?? 60_000,
      ...(ldap.tls && !ldap.startTls && { tlsOptions: ldap.tls }),
    });
    try {
      if (ldap.startTls) await startTls(fresh, ldap);
      if (ldap.bindDn !== undefined) await fresh.bind(ldap.bindDn, ldap.password ?? "");
      if (profile === undefined) {
        const { searchEntries } = await fresh.search("", {
          scope: "base",
          filter: "(objectClass=*)",
          attributes: [...rootDseAttributes],
        });
        profile = serverProfile(searchEntries[0] && toLdapEntry(searchEntries[0]));
        plan = readPlan(options, profile);
      }
    } catch (error) {
      await fresh.unbind().catch(() => undefined);
      throw error;
    }
    connectedOnce = true;
    client = fresh;
    return fresh;
  };

  const disconnect = async () => {
    await client?.unbind().catch(() => undefined);
    client = undefined;
  };

  const failure = (error: unknown) => toDirectoryError(error, ldap, connectedOnce);
  const changes = (): ChangeFeed => {
    const contentSync = createChangeFeed({
      connect,
      disconnect,
      failure,
      baseDn,
      filter,
      mapping,
      attributes,
      bufferAttributes: asBuffers,
      passwords,
    });
    const dirSync = createDirSyncFeed({
      connect: async () => {
        const client = await connect();
        return { client, profile: profile as ServerProfile, plan: plan as ReadPlan };
      },
      disconnect,
      failure,
      baseDn,
      bufferAttributes: asBuffers,
      passwords,
      scope: JSON.stringify({
        filter: options.filter ?? null,
        disabledAccounts: options.disabledAccounts ?? "keep",
        defaultUsername: options.defaultUsername ?? false,
      }),
    });
    // Which one serves is known once the root DSE is read: DirSync on Active Directory.
    const feed = async () => {
      await connect().catch((error) => {
        throw failure(error);
      });
      return profile?.activeDirectory ? dirSync : contentSync;
    };
    return {
      scope: contentSync.scope,
      cookieNow: async (now) => (await feed()).cookieNow(now),
      changesSince: async (cookie, since) => (await feed()).changesSince(cookie, since),
    };
  };

  return {
    // The filter is not part of it: changing it needs no re-sync, the next cycle's diff does it.
    identity: `${redactUrl(ldap.url)} ${baseDn}`,
    ...(options.contentSync && { changes: changes() }),
    async *read({ uuidsOnly, signal }): AsyncGenerator<DirectoryPage> {
      const pages = (async function* (): AsyncGenerator<DirectoryPage> {
        const connection = await connect();
        const { ad, ...read } = plan as ReadPlan;
        const search = connection.searchPaginated(baseDn, {
          scope: "sub",
          filter: read.filter,
          attributes: uuidsOnly ? read.uuidAttributes : read.attributes,
          explicitBufferAttributes: asBuffers,
          paged: { pageSize: options.pageSize ?? 500 },
        });
        for await (const page of search) {
          const result: DirectoryPage = {
            users: [],
            skipped: [],
            ...(ad && !uuidsOnly && { disabled: 0, nonUsers: 0 }),
          };
          for (const raw of page.searchEntries) {
            addEntry(toLdapEntry(raw), plan as ReadPlan, { uuidsOnly, passwords }, result);
          }
          yield result;
        }
      })();
      try {
        for await (const page of readAhead(pages)) {
          signal?.throwIfAborted();
          yield page;
        }
      } catch (error) {
        // The next read reconnects: a connection that failed mid-search is not reused.
        await disconnect();
        throw toDirectoryError(error, ldap, connectedOnce);
      }
    },
    close: disconnect,
  };
}

/**
 * Yields what `source` yields, asking for the next item as soon as one is handed out: the next
 * page is read from the directory and mapped while the caller delivers this one, one message at
 * a time, so that a sync waits on the directory only when it outpaces the application. At most
 * two pages are held.
 */
async function* readAhead<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = source.next();
      // Its failure is thrown where it is awaited, on the next turn of this loop.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await source.return(undefined);
  }
}

/** The fix for a paged read over the bind account's size limit, for each kind of directory. */
export const sizeLimitFix =
  "the bind account is held to a size limit below the number of entries the filter matches: " +
  'lift it for the account (OpenLDAP: limits dn.exact="<bind DN>" size=unlimited, or ' +
  "olcLimits in cn=config; 389 Directory Server: nsSizeLimit: -1 on the bind entry; " +
  "Active Directory: MaxPageSize in the LDAP policy, or a smaller --page-size)";

function toDirectoryError(
  error: unknown,
  ldap: LdapConnectionOptions,
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
  if (code === sizeLimitExceeded || code === adminLimitExceeded) {
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

/** Upgrades the connection; a server that refuses the StartTLS operation is a fatal error. */
async function startTls(client: Client, { url, tls }: LdapConnectionOptions): Promise<void> {
  try {
    // startTLS() writes the socket into the options it is given: a copy each time.
    await client.startTLS({ ...tls });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "number") throw error;
    throw new DirectoryError(
      `LDAP ${redactUrl(url)}: the server refused StartTLS (${(error as Error).message}): give it a certificate ` +
        "(OpenLDAP: TLSCertificateFile and TLSCertificateKeyFile), or use ldaps://",
      { fatal: true, cause: error },
    );
  }
}
