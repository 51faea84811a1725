import type { ConnectionOptions } from "node:tls";
import type { Client } from "ldapts";
import { isCertificateProblem } from "../internal/certificate-problem.ts";
import {
  type ChangeFeed,
  DirectoryError,
  type DirectoryPage,
  type DirectorySource,
} from "../sync/source.ts";
import {
  accountAttributes,
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
  type DirectoryMapping,
  toLdapEntry,
  uuidAttributes,
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
  let client: Client | undefined;
  // What the root DSE said, read once: whether the server is Active Directory decides the reads.
  let profile: ServerProfile | undefined;
  let plan: ReadPlan | undefined;

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
    const fresh = new ldapts.Client({
      url: ldap.url,
      timeout: ldap.timeoutMs ?? 60_000,
      connectTimeout: ldap.timeoutMs ?? 60_000,
      ...(ldap.tls && { tlsOptions: ldap.tls }),
    });
    if (ldap.startTls) await fresh.startTLS(ldap.tls);
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
    client = fresh;
    return fresh;
  };

  const disconnect = async () => {
    await client?.unbind().catch(() => undefined);
    client = undefined;
  };

  const failure = (error: unknown) => toDirectoryError(error, ldap.url);
  const changes = (): ChangeFeed => {
    const contentSync = createChangeFeed({
      connect,
      disconnect,
      failure,
      baseDn,
      filter,
      mapping,
      attributes,
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
    identity: `${ldap.url} ${baseDn} ${filter}`,
    ...(options.contentSync && { changes: changes() }),
    async *read({ uuidsOnly, signal }): AsyncGenerator<DirectoryPage> {
      const pages = (async function* (): AsyncGenerator<DirectoryPage> {
        const connection = await connect();
        const { ad, ...read } = plan as ReadPlan;
        // On AD, the uuids read also tells disabled and system accounts apart.
        const search = connection.searchPaginated(baseDn, {
          scope: "sub",
          filter: read.filter,
          attributes: uuidsOnly
            ? [...uuidAttributes, ...(ad ? accountAttributes : [])]
            : read.attributes,
          explicitBufferAttributes: ["objectGUID"],
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
        throw toDirectoryError(error, ldap.url);
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

function toDirectoryError(error: unknown, url: string): DirectoryError {
  if (error instanceof DirectoryError) return error;
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  if (typeof code === "number" && fatalCodes.has(code)) {
    return new DirectoryError(`LDAP ${url}: ${fatalCodes.get(code)} (${text})`, {
      fatal: true,
      cause: error,
    });
  }
  if (typeof code === "string" && isCertificateProblem(code)) {
    return new DirectoryError(
      `LDAP ${url}: the server's certificate is not trusted (${code}): pass its CA (ldap.tls.ca, --ldap-ca FILE)`,
      { fatal: true, cause: error },
    );
  }
  return new DirectoryError(`LDAP ${url}: ${text}`, { fatal: false, cause: error });
}
